const DAY_MS = 24 * 60 * 60 * 1000;

/** Today's UTC date, `YYYY-MM-DD`, computed once a day (again should the clock be set back). */
let day = { date: '', from: 0, until: 0 };
export function utcToday(now = Date.now()): string {
  if (now >= day.until || now < day.from) {
    const from = Math.floor(now / DAY_MS) * DAY_MS;
    day = { date: new Date(now).toISOString().slice(0, 10), from, until: from + DAY_MS };
  }
  return day.date;
}
