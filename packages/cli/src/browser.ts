/**
 * `@aegis/cli/browser`: what the report page (`packages/page`, private) shows the way the
 * commands say it, so that the page and `aegis verify`, `show` and `report` cannot disagree on
 * one record: the `aegis.verify/1` document, the line on unfinished calls, `show`'s entries and
 * its `--path`/`--host` filters, and the shape of the data `aegis report` writes into a page.
 * No Node API anywhere below it: the page bundles it for the browser with
 * `@aegis/format/browser` (adr/0031). For aegis's own page: no promise of compatibility to
 * anyone else.
 *
 * @packageDocumentation
 */
export { verifyJson, summarizeUnfinishedCalls, type Where } from "./verify-view.js";
export { entriesOf, type Entry } from "./show/entries.js";
export { axesName, parseHostFilter, parsePathFilter, type AxisFilter, type AxisFilterParse } from "./show/touched.js";
export type { CheckpointData, EnvelopeData, HeldEntry, RecheckData, RecheckedCall, ReportData } from "./report/data.js";
