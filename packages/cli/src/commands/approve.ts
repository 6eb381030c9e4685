import { Command, Option } from "clipanion";
import { ControlRequestError, requestControl, type ControlRequest, type ControlResponse } from "@aegis/mcp";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { escapeHidden, renderParks } from "../park-list.js";

export class ApproveCommand extends AegisCommand {
  static override paths = [["approve"]];

  static override usage = Command.Usage({
    description: "Answer a call that aegis wrap parked for approval",
    details: `
      Asks the running \`aegis wrap\` listening at \`--control\` to record a signed \`decision\` Line for the park \`<APPROVAL_ID>\`: approved, with the scope of the parked call (its tool, and the paths or endpoint it named), or with \`--deny\`, denied for \`--reason\`. The client's refusal carried the id (in its text, and as \`approval_id\` under \`_meta["io.github.aegis-ts/refusal"]\`; the reference's error, with \`--refusal reference\`, has no room for it), and wrap printed it on its stderr with the control socket's path.

      An approval lets one call through: the next retry of that very call (the same tool and arguments) within the scope runs, and its outcome names the approval as \`decision_axes.approval_ref\`. An unknown id, or one already answered, is refused. \`--list\` prints the calls parked now: for each, its tool, the rule that parked it, when, its arguments (their canonical JSON, cut at 4096 bytes with the full size given) and the scope an approval would record (the tool, and the paths by access and the endpoint the call named). The agent chose the tool and the arguments: they are printed as JSON, with control, format and bidirectional characters escaped.

      Whoever can connect to the socket can approve. By default only wrap's own user can, so an agent running as that user can approve its own parked call, whose id its refusal carries: run wrap as a user of its own, and open the socket to the approvers with \`aegis wrap --control-group\` (README, "Approvals an agent cannot give itself").

      Without \`--control\`, the socket named by the AEGIS_CONTROL environment variable is used. Exit codes: 0 recorded (or listed), 1 refused (unknown or already answered) or a usage error, 2 no wrap answered at the socket, or this user may not connect to it.
    `,
    examples: [
      ["Let a parked call run once", "aegis approve apr-0b6f2c1e-8d7a-4c55-9f1e-2a3b4c5d6e7f --control session.aarl.control"],
      ["Refuse it, saying why", 'aegis approve apr-0b6f2c1e-8d7a-4c55-9f1e-2a3b4c5d6e7f --deny --reason "not in this sprint" --control session.aarl.control'],
      ["The calls parked now", "aegis approve --list --control session.aarl.control"],
    ],
  });

  deny = Option.Boolean("--deny", false, { description: "Record a denial instead of an approval (needs --reason)" });
  reason = Option.String("--reason", { description: "Why the call is denied" });
  control = Option.String("--control", { description: "The control socket aegis wrap printed (default $AEGIS_CONTROL)" });
  list = Option.Boolean("--list", false, { description: "Print the calls parked now instead" });
  json = Option.Boolean("--json", false, { description: "Print wrap's answer as one JSON document" });
  approvalId = Option.String({ name: "APPROVAL_ID", required: false });

  protected async run(): Promise<ExitCode> {
    const request = this.request();
    const path = this.control ?? process.env["AEGIS_CONTROL"];
    if (path === undefined || path === "")
      throw usage("approve needs --control <PATH>: the control socket aegis wrap printed on its stderr (or set AEGIS_CONTROL)");
    let response: ControlResponse;
    try {
      response = await requestControl(path, request);
    } catch (error) {
      if (error instanceof ControlRequestError) throw new CliError({ code: "control", path, problem: error.fault.code, detail: error.fault.detail });
      throw error;
    }
    if (this.json) await this.out(`${JSON.stringify(response, null, 2)}\n`);
    if (!response.ok) {
      if (this.json) return 1;
      // Whatever listens at the socket wrote the message: what a terminal would act on is escaped.
      throw new CliError({ code: "control", path, problem: "refused", detail: escapeHidden(response.message) });
    }
    if (this.json) return 0;
    if (response.op === "list") {
      await this.out(renderParks(response.pending));
      return 0;
    }
    await this.out(
      `${response.op === "approve" ? "approved" : "denied"} ${response.approval_id}: decision recorded at seq ${response.seq} (line_hash ${response.line_hash})\n`,
    );
    return 0;
  }

  private request(): ControlRequest {
    if (this.list) {
      if (this.approvalId !== undefined || this.deny || this.reason !== undefined) throw usage("--list takes no <APPROVAL_ID>, --deny or --reason");
      return { op: "list" };
    }
    if (this.approvalId === undefined) throw usage("approve requires <APPROVAL_ID> (or --list)");
    if (this.deny) {
      if (this.reason === undefined || this.reason.trim() === "") throw usage("--deny needs --reason <TEXT>: a denial records why");
      return { op: "deny", approval_id: this.approvalId, reason: this.reason };
    }
    if (this.reason !== undefined) throw usage("--reason is read only with --deny");
    return { op: "approve", approval_id: this.approvalId };
  }
}

function usage(message: string): CliError {
  return new CliError({ code: "usage", message, command: "approve" });
}
