const LINE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{3}Z$/;

/**
 * The writer's spelling of a time, and a real one: what `new Date(text).toISOString()` would
 * spell back (2026-02-30 and 24:00 roll over, so they are refused), decided by arithmetic,
 * because a Date per Line costs a reader of a million Lines most of a second.
 */
export function isLineTime(text: string): boolean {
  const m = LINE_TIME.exec(text);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && hour < 24 && minute < 60 && second < 60;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
