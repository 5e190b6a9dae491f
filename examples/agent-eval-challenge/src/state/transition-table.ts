/**
 * A state machine as data: the rows it allows, each (from, event) -> to. Anything not listed is
 * forbidden; there is no wildcard and no default, so a new state or event is forbidden until a
 * row names it.
 */
export interface TransitionRow<State extends string, Event extends string> {
  readonly from: State;
  readonly event: Event;
  readonly to: State;
}

export type TransitionTable<State extends string, Event extends string> = readonly TransitionRow<
  State,
  Event
>[];

/** The state `event` leads to from `from`, or undefined when the table forbids it. */
export function nextState<State extends string, Event extends string>(
  table: TransitionTable<State, Event>,
  from: string,
  event: string,
): State | undefined {
  return table.find((row) => row.from === from && row.event === event)?.to;
}

/** Expands "each of these states, on this event, goes to that state" into rows. */
export function rowsFrom<State extends string, Event extends string>(
  froms: readonly State[],
  event: Event,
  to: State,
): TransitionRow<State, Event>[] {
  return froms.map((from) => ({ from, event, to }));
}
