// How often the event loop turned while some work ran: a structural check that the work let
// other requests run (no wall-clock assertion).

/** How many times a 0 ms timer fired while `work` ran. */
export async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let working = true;
  const tick = () => {
    turns++;
    if (working) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  try {
    await work();
  } finally {
    working = false;
  }
  return turns;
}
