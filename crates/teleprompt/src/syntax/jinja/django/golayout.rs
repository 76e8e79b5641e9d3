//! Go's time layouts (`"2006-01-02 15:04:05"`), as `time.Time.Format`
//! reads them: pongo2's `{% now %}` and `date`/`time` filters take them.

use jiff::Zoned;

const LONG_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// One element of a layout (Go's `std*` constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunk {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    Pm,
    LowerPm,
    Tz,
    Iso8601Tz,
    Iso8601SecondsTz,
    Iso8601ShortTz,
    Iso8601ColonTz,
    Iso8601ColonSecondsTz,
    NumTz,
    NumSecondsTz,
    NumShortTz,
    NumColonTz,
    NumColonSecondsTz,
    /// Fractional seconds: separator, digits, trailing zeros trimmed.
    Frac(u8, usize, bool),
}

fn starts_with_lower(s: &[u8]) -> bool {
    s.first().is_some_and(u8::is_ascii_lowercase)
}

/// The next chunk of `layout`: (literal prefix length, chunk, chunk length).
fn next_chunk(layout: &[u8]) -> Option<(usize, Chunk, usize)> {
    let has = |i: usize, s: &str| layout.get(i..i + s.len()) == Some(s.as_bytes());
    for i in 0..layout.len() {
        let c = layout.get(i).copied().unwrap_or(0);
        let next = layout.get(i + 1).copied().unwrap_or(0);
        let found = match c {
            b'J' if has(i, "Jan") => {
                if has(i, "January") {
                    Some((Chunk::LongMonth, 7))
                } else if !starts_with_lower(layout.get(i + 3..).unwrap_or_default()) {
                    Some((Chunk::Month, 3))
                } else {
                    None
                }
            }
            b'M' if has(i, "Mon") => {
                if has(i, "Monday") {
                    Some((Chunk::LongWeekDay, 6))
                } else if !starts_with_lower(layout.get(i + 3..).unwrap_or_default()) {
                    Some((Chunk::WeekDay, 3))
                } else {
                    None
                }
            }
            b'M' if has(i, "MST") => Some((Chunk::Tz, 3)),
            b'0' if (b'1'..=b'6').contains(&next) => Some((
                match next {
                    b'1' => Chunk::ZeroMonth,
                    b'2' => Chunk::ZeroDay,
                    b'3' => Chunk::ZeroHour12,
                    b'4' => Chunk::ZeroMinute,
                    b'5' => Chunk::ZeroSecond,
                    _ => Chunk::Year,
                },
                2,
            )),
            b'0' if has(i, "002") => Some((Chunk::ZeroYearDay, 3)),
            b'1' if next == b'5' => Some((Chunk::Hour, 2)),
            b'1' => Some((Chunk::NumMonth, 1)),
            b'2' if has(i, "2006") => Some((Chunk::LongYear, 4)),
            b'2' => Some((Chunk::Day, 1)),
            b'_' if next == b'2' => {
                if has(i + 1, "2006") {
                    // `_2006` is a literal `_` and the year.
                    return Some((i + 1, Chunk::LongYear, 4));
                }
                Some((Chunk::UnderDay, 2))
            }
            b'_' if has(i, "__2") => Some((Chunk::UnderYearDay, 3)),
            b'3' => Some((Chunk::Hour12, 1)),
            b'4' => Some((Chunk::Minute, 1)),
            b'5' => Some((Chunk::Second, 1)),
            b'P' if next == b'M' => Some((Chunk::Pm, 2)),
            b'p' if next == b'm' => Some((Chunk::LowerPm, 2)),
            b'-' if has(i, "-070000") => Some((Chunk::NumSecondsTz, 7)),
            b'-' if has(i, "-07:00:00") => Some((Chunk::NumColonSecondsTz, 9)),
            b'-' if has(i, "-0700") => Some((Chunk::NumTz, 5)),
            b'-' if has(i, "-07:00") => Some((Chunk::NumColonTz, 6)),
            b'-' if has(i, "-07") => Some((Chunk::NumShortTz, 3)),
            b'Z' if has(i, "Z070000") => Some((Chunk::Iso8601SecondsTz, 7)),
            b'Z' if has(i, "Z07:00:00") => Some((Chunk::Iso8601ColonSecondsTz, 9)),
            b'Z' if has(i, "Z0700") => Some((Chunk::Iso8601Tz, 5)),
            b'Z' if has(i, "Z07:00") => Some((Chunk::Iso8601ColonTz, 6)),
            b'Z' if has(i, "Z07") => Some((Chunk::Iso8601ShortTz, 3)),
            b'.' | b',' if next == b'0' || next == b'9' => {
                let mut j = i + 1;
                while layout.get(j) == Some(&next) {
                    j += 1;
                }
                // Only a fraction when the run of digits ends here.
                if layout.get(j).is_some_and(u8::is_ascii_digit) {
                    None
                } else {
                    Some((Chunk::Frac(c, j - i - 1, next == b'9'), j - i))
                }
            }
            _ => None,
        };
        if let Some((chunk, len)) = found {
            return Some((i, chunk, len));
        }
    }
    None
}

fn pad(out: &mut String, value: i64, width: usize) {
    if value < 0 {
        out.push('-');
    }
    let digits = value.unsigned_abs().to_string();
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(&digits);
}

/// Formats `time` with a Go layout.
pub(super) fn format(time: &Zoned, layout: &str) -> String {
    let mut out = String::with_capacity(layout.len() + 10);
    let mut rest = layout.as_bytes();
    let year = i64::from(time.year());
    let month = usize::try_from(time.month()).unwrap_or(1);
    let day = i64::from(time.day());
    let hour = i64::from(time.hour());
    let minute = i64::from(time.minute());
    let second = i64::from(time.second());
    let nanos = i64::from(time.subsec_nanosecond());
    let offset = i64::from(time.offset().seconds());
    let long_month = LONG_MONTHS
        .get(month.wrapping_sub(1))
        .copied()
        .unwrap_or("");
    let weekday = usize::from(time.weekday().to_sunday_zero_offset().unsigned_abs());
    let long_day = LONG_DAYS.get(weekday).copied().unwrap_or("");
    while let Some((prefix, chunk, len)) = next_chunk(rest) {
        out.push_str(&String::from_utf8_lossy(
            rest.get(..prefix).unwrap_or_default(),
        ));
        rest = rest.get(prefix + len..).unwrap_or_default();
        match chunk {
            Chunk::Year => pad(&mut out, year.rem_euclid(100), 2),
            Chunk::LongYear => pad(&mut out, year, 4),
            Chunk::Month => out.push_str(long_month.get(..3).unwrap_or("")),
            Chunk::LongMonth => out.push_str(long_month),
            Chunk::NumMonth => pad(&mut out, month as i64, 0),
            Chunk::ZeroMonth => pad(&mut out, month as i64, 2),
            Chunk::WeekDay => out.push_str(long_day.get(..3).unwrap_or("")),
            Chunk::LongWeekDay => out.push_str(long_day),
            Chunk::Day => pad(&mut out, day, 0),
            Chunk::UnderDay => {
                if day < 10 {
                    out.push(' ');
                }
                pad(&mut out, day, 0);
            }
            Chunk::ZeroDay => pad(&mut out, day, 2),
            Chunk::UnderYearDay | Chunk::ZeroYearDay => {
                let yday = i64::from(time.day_of_year());
                if chunk == Chunk::UnderYearDay {
                    if yday < 100 {
                        out.push(' ');
                    }
                    if yday < 10 {
                        out.push(' ');
                    }
                    pad(&mut out, yday, 0);
                } else {
                    pad(&mut out, yday, 3);
                }
            }
            Chunk::Hour => pad(&mut out, hour, 2),
            Chunk::Hour12 | Chunk::ZeroHour12 => {
                let h = match hour % 12 {
                    0 => 12,
                    h => h,
                };
                pad(&mut out, h, if chunk == Chunk::Hour12 { 0 } else { 2 });
            }
            Chunk::Minute => pad(&mut out, minute, 0),
            Chunk::ZeroMinute => pad(&mut out, minute, 2),
            Chunk::Second => pad(&mut out, second, 0),
            Chunk::ZeroSecond => pad(&mut out, second, 2),
            Chunk::Pm => out.push_str(if hour >= 12 { "PM" } else { "AM" }),
            Chunk::LowerPm => out.push_str(if hour >= 12 { "pm" } else { "am" }),
            Chunk::Tz => zone_name(&mut out, time, offset),
            Chunk::Frac(separator, digits, trim) => {
                let text = format!("{nanos:09}");
                let mut kept = text.get(..digits.min(9)).unwrap_or("");
                if trim {
                    kept = kept.trim_end_matches('0');
                }
                if !(trim && kept.is_empty()) {
                    out.push(char::from(separator));
                    out.push_str(kept);
                }
            }
            iso @ (Chunk::Iso8601Tz
            | Chunk::Iso8601SecondsTz
            | Chunk::Iso8601ShortTz
            | Chunk::Iso8601ColonTz
            | Chunk::Iso8601ColonSecondsTz)
                if offset == 0 =>
            {
                let _ = iso;
                out.push('Z');
            }
            numeric => {
                let colon = matches!(
                    numeric,
                    Chunk::Iso8601ColonTz
                        | Chunk::NumColonTz
                        | Chunk::Iso8601ColonSecondsTz
                        | Chunk::NumColonSecondsTz
                );
                let short = matches!(numeric, Chunk::NumShortTz | Chunk::Iso8601ShortTz);
                let seconds = matches!(
                    numeric,
                    Chunk::Iso8601SecondsTz
                        | Chunk::NumSecondsTz
                        | Chunk::NumColonSecondsTz
                        | Chunk::Iso8601ColonSecondsTz
                );
                let zone = (offset / 60).abs();
                out.push(if offset < 0 { '-' } else { '+' });
                pad(&mut out, zone / 60, 2);
                if colon {
                    out.push(':');
                }
                if !short {
                    pad(&mut out, zone % 60, 2);
                }
                if seconds {
                    if colon {
                        out.push(':');
                    }
                    pad(&mut out, offset.abs() % 60, 2);
                }
            }
        }
    }
    out.push_str(&String::from_utf8_lossy(rest));
    out
}

/// `MST`: the zone's abbreviation; a time with a bare offset (no named
/// zone) prints it as `-0700`, as Go does.
fn zone_name(out: &mut String, time: &Zoned, offset: i64) {
    let tz = time.time_zone();
    if tz.iana_name().is_some() {
        let info = tz.to_offset_info(time.timestamp());
        out.push_str(info.abbreviation());
        return;
    }
    let zone = offset / 60;
    out.push(if zone < 0 { '-' } else { '+' });
    pad(out, zone.abs() / 60, 2);
    pad(out, zone.abs() % 60, 2);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_layouts() {
        let time: Zoned = "2026-03-07T09:05:03.120+00:00[UTC]".parse().unwrap();
        assert_eq!(format(&time, "2006-01-02 15:04:05"), "2026-03-07 09:05:03");
        assert_eq!(
            format(&time, "Monday, January 2, 2006 3:04PM MST"),
            "Saturday, March 7, 2026 9:05AM UTC"
        );
        assert_eq!(
            format(&time, "Mon Jan _2 .000 .999 Z07:00"),
            "Sat Mar  7 .120 .12 Z"
        );
        assert_eq!(format(&time, "Janet 002"), "Janet 066");
    }
}
