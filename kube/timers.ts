// Delays computed from user input (grace periods, probe periods, deadlines)
// can be any int64; Node's timers take at most 2^31-1 ms and fire at once for
// more, and a gRPC deadline that far out makes grpc-js throw. Clamp them.
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const clampDelay = (ms: number): number =>
  Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_TIMER_MS) : MAX_TIMER_MS;
