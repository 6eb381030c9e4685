import type { EnvelopeSource } from "@aegis/envelope";
import { callFacts } from "./facts.js";
import { RecordFollower, type CallRecord, type FollowedLine, type SessionRecord } from "./follow.js";
import { SpanPlanner, type SpanPlan, type Untimed } from "./spans.js";

/**
 * The export of a record file after the fact (SPEC Appendix A.6), as `LiveExport` is of a
 * writer's Lines: each Line is taken as the verifier walks the file (`line`), and what was
 * followed waits for the verdict, so that a record that does not hold exports nothing. Then
 * `plan` makes the spans in file order, each call's with what it takes from the Envelope
 * (A.3). `aegis export` reads the file and says what went wrong; the spans are made here.
 */
export class RecordExport {
  private readonly events: ({ readonly code: "call"; readonly call: CallRecord } | { readonly code: "session"; readonly session: SessionRecord })[] = [];
  private readonly follower: RecordFollower;
  private followedCalls = 0;
  private followedSessions = 0;

  /** `limit`: the most calls kept until the verdict is known (SPEC §18); the rest are counted only. */
  constructor(private readonly limit: number) {
    this.follower = new RecordFollower({
      call: (call) => {
        this.followedCalls += 1;
        if (!this.over) this.events.push({ code: "call", call });
      },
      session: (session) => {
        this.followedSessions += 1;
        if (!this.over) this.events.push({ code: "session", session });
      },
    });
  }

  /** Take the next Line, as the verifier's walk hands it over. */
  line(line: FollowedLine): void {
    this.follower.line(line);
  }

  /** The file ends here: a Session without a `close` ends with it. */
  end(): void {
    this.follower.end();
  }

  /** Calls followed, those past the limit included. */
  get calls(): number {
    return this.followedCalls;
  }

  /** Sessions followed. */
  get sessions(): number {
    return this.followedSessions;
  }

  /** More calls were followed than the limit keeps: the spans cannot all be made. */
  get over(): boolean {
    return this.followedCalls > this.limit;
  }

  /**
   * The spans of what was followed, in file order; a call's request and response are read from
   * `envelope`, when given, for what its span takes from them (`content`: its arguments and
   * result too). A Line with no `time` stops it: no span can be made of it.
   */
  async plan(
    envelope: EnvelopeSource | undefined,
    content: boolean,
  ): Promise<{ readonly ok: true; readonly plans: readonly SpanPlan[] } | { readonly ok: false; readonly untimed: Untimed }> {
    const planner = new SpanPlanner();
    const plans: SpanPlan[] = [];
    for (const event of this.events) {
      const plan = event.code === "call" ? planner.call(event.call, await callFacts(event.call, envelope, content)) : planner.session(event.session);
      if ("code" in plan) return { ok: false, untimed: plan };
      plans.push(plan);
    }
    return { ok: true, plans };
  }
}
