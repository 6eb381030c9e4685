export { main, buildCli } from "./main.js";
