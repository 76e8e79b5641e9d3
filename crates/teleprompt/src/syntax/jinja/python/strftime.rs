//! `strftime_now(format)` as `transformers` defines it:
//! `datetime.now().strftime(format)`, which on Linux is glibc's `strftime`
//! in the C locale, with Python's own `%f`, `%z` and `%Z`.
//!
//! jiff formats each conversion; this module decides what glibc and Python
//! do differently: `%c`, `%x`, `%X`, `%r` in the POSIX locale's forms,
//! `%f` as six digits of microseconds, the `E`/`O` modifiers ignored, the
//! `#` flag, and conversions glibc does not know (`%Q`, `%q`, `%N`, `%:z`,
//! `%3f`…) printed as they are rather than refused.

use jiff::fmt::strtime::{BrokenDownTime, Config, PosixCustom};
use jiff::Zoned;
use minijinja::ErrorKind;

/// The conversions glibc formats (besides `%%`, `%f`, `%z`, `%Z`).
const GLIBC: &str = "aAbBcCdDeFgGhHIjklmMnpPrRsStTuUVwWxXyY";

/// Formats `now` as Python's `datetime.strftime(format)` does. With
/// `naive`, `now` stands for a datetime without a time zone (as
/// `transformers`' `datetime.now()`): `%z` and `%Z` print nothing. The
/// text may be `room` bytes long (else the render's room on minijinja).
pub(in crate::syntax::jinja) fn strftime(
    now: &Zoned,
    format: &str,
    (naive, room): (bool, Option<usize>),
) -> Result<String, minijinja::Error> {
    let time = BrokenDownTime::from(now);
    let config = Config::new().custom(PosixCustom::new());
    let jiff = |spec: &str| {
        time.to_string_with_config(&config, spec).map_err(|error| {
            minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("strftime_now cannot format {spec:?}: {error}"),
            )
        })
    };
    // The text may be as long as the render may still print (a format from
    // data, `%999999999Y`, or a long one repeated, is stopped before it
    // is built).
    let (room, over) = match room {
        Some(room) => (room, crate::limits::Exceeded::Value(room)),
        None => crate::syntax::jinja::current::budget(),
    };
    let too_long = || crate::syntax::jinja::current::exceeded(over);
    let mut out = String::new();
    let mut rest = format;
    while let Some(at) = rest.find('%') {
        out.push_str(rest.get(..at).unwrap_or_default());
        if out.len() > room {
            return Err(too_long());
        }
        let spec = rest.get(at..).unwrap_or_default();
        let conversion = Conversion::read(spec);
        let text = spec.get(..conversion.len).unwrap_or(spec);
        rest = spec.get(conversion.len..).unwrap_or_default();
        // A width pads a conversion glibc knows; an unknown one prints
        // as it is, width and all.
        let width = conversion.width.parse::<usize>();
        let padded = conversion
            .letter
            .is_some_and(|letter| GLIBC.contains(letter));
        if padded && width.map_or(!conversion.width.is_empty(), |width| width > room) {
            return Err(too_long());
        }
        let bare = conversion.flags.is_empty() && conversion.width.is_empty();
        match conversion.letter {
            // The format ends inside the conversion: glibc prints it.
            None => out.push_str(text),
            Some('%') => out.push('%'),
            Some('f') if bare => {
                out.push_str(&format!("{:06}", now.subsec_nanosecond() / 1000));
            }
            Some('z' | 'Z') if naive => {}
            Some(letter @ ('z' | 'Z')) => out.push_str(&jiff(&format!("%{letter}"))?),
            Some(letter) if GLIBC.contains(letter) => {
                let (flags, letter) = conversion.jiff_flags(letter);
                out.push_str(&jiff(&format!("%{flags}{}{letter}", conversion.width))?);
            }
            // Not a conversion glibc knows: printed as it is.
            Some(_) => out.push_str(text),
        }
    }
    out.push_str(rest);
    if out.len() > room {
        return Err(too_long());
    }
    Ok(out)
}

/// One `%…` conversion of a format.
struct Conversion<'a> {
    /// Flags: `-`, `_`, `0`, `^`, `#`.
    flags: &'a str,
    /// A field width (digits).
    width: &'a str,
    /// The conversion character; `None` when the format ends first.
    letter: Option<char>,
    /// Bytes of the format the conversion takes, `%` included.
    len: usize,
}

impl<'a> Conversion<'a> {
    /// Reads the conversion at the start of `spec` (which starts with `%`).
    fn read(spec: &'a str) -> Conversion<'a> {
        let after = spec.get(1..).unwrap_or_default();
        let flags_len = after
            .find(|c: char| !"-_0^#".contains(c))
            .unwrap_or(after.len());
        let flags = after.get(..flags_len).unwrap_or_default();
        let after = after.get(flags_len..).unwrap_or_default();
        let width_len = after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len());
        let width = after.get(..width_len).unwrap_or_default();
        let mut after = after.get(width_len..).unwrap_or_default();
        let mut len = 1 + flags_len + width_len;
        // The locale's alternative forms (`%Ey`, `%Od`) are the plain ones
        // in the C locale.
        if let Some(rest) = after.strip_prefix(['E', 'O']) {
            if rest.starts_with(|c: char| GLIBC.contains(c)) {
                after = rest;
                len += 1;
            }
        }
        let letter = after.chars().next();
        Conversion {
            flags,
            width,
            letter,
            len: len + letter.map_or(0, char::len_utf8),
        }
    }

    /// The flags and conversion jiff is given: glibc's `#` (swap case)
    /// becomes `^` on names and `%P` for `%p`; other flags are jiff's too.
    fn jiff_flags(&self, letter: char) -> (String, char) {
        let mut flags: String = self.flags.chars().filter(|c| *c != '#').collect();
        if self.flags.contains('#') {
            match letter {
                'a' | 'A' | 'b' | 'B' | 'h' => flags.push('^'),
                'p' => return (flags, 'P'),
                _ => {}
            }
        }
        (flags, letter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Zoned {
        text.parse().unwrap()
    }

    #[test]
    fn formats_as_python_on_glibc() {
        // Expected strings from CPython 3.11 `datetime.strftime` on Linux
        // (glibc), for 2024-03-05 09:07:03.012345, 2021-01-01 00:00:00,
        // 2024-12-31 23:59:59.999999 and 2026-05-09 12:00:00 in UTC.
        let times = [
            at("2024-03-05T09:07:03.012345+00:00[UTC]"),
            at("2021-01-01T00:00:00+00:00[UTC]"),
            at("2024-12-31T23:59:59.999999+00:00[UTC]"),
            at("2026-05-09T12:00:00+00:00[UTC]"),
        ];
        let cases: &[(&str, [&str; 4])] = &[
            (
                "%d %b %Y",
                ["05 Mar 2024", "01 Jan 2021", "31 Dec 2024", "09 May 2026"],
            ),
            (
                "%B %d, %Y",
                [
                    "March 05, 2024",
                    "January 01, 2021",
                    "December 31, 2024",
                    "May 09, 2026",
                ],
            ),
            (
                "%-d|%e|%A|%a",
                [
                    "5| 5|Tuesday|Tue",
                    "1| 1|Friday|Fri",
                    "31|31|Tuesday|Tue",
                    "9| 9|Saturday|Sat",
                ],
            ),
            (
                "%I %p|%-I:%M %p|%P",
                [
                    "09 AM|9:07 AM|am",
                    "12 AM|12:00 AM|am",
                    "11 PM|11:59 PM|pm",
                    "12 PM|12:00 PM|pm",
                ],
            ),
            (
                "%j|%y|%C|%H:%M",
                [
                    "065|24|20|09:07",
                    "001|21|20|00:00",
                    "366|24|20|23:59",
                    "129|26|20|12:00",
                ],
            ),
            (
                "%c",
                [
                    "Tue Mar  5 09:07:03 2024",
                    "Fri Jan  1 00:00:00 2021",
                    "Tue Dec 31 23:59:59 2024",
                    "Sat May  9 12:00:00 2026",
                ],
            ),
            (
                "%x|%X|%r",
                [
                    "03/05/24|09:07:03|09:07:03 AM",
                    "01/01/21|00:00:00|12:00:00 AM",
                    "12/31/24|23:59:59|11:59:59 PM",
                    "05/09/26|12:00:00|12:00:00 PM",
                ],
            ),
            ("%f", ["012345", "000000", "999999", "000000"]),
            (
                "%U %W %V %G %g %u %w",
                [
                    "09 10 10 2024 24 2 2",
                    "00 00 53 2020 20 5 5",
                    "52 53 01 2025 25 2 2",
                    "18 18 19 2026 26 6 6",
                ],
            ),
            (
                "%D|%F|%T|%R|%k|%l|%h",
                [
                    "03/05/24|2024-03-05|09:07:03|09:07| 9| 9|Mar",
                    "01/01/21|2021-01-01|00:00:00|00:00| 0|12|Jan",
                    "12/31/24|2024-12-31|23:59:59|23:59|23|11|Dec",
                    "05/09/26|2026-05-09|12:00:00|12:00|12|12|May",
                ],
            ),
            (
                "%s",
                ["1709629623", "1609459200", "1735689599", "1778328000"],
            ),
            (
                "%_d|%0e|%^a|%Ey|%Od|%G-W%V-%u",
                [
                    " 5|05|TUE|24|05|2024-W10-2",
                    " 1|01|FRI|21|01|2020-W53-5",
                    "31|31|TUE|24|31|2025-W01-2",
                    " 9|09|SAT|26|09|2026-W19-6",
                ],
            ),
            (
                "%Q|%q|%:z|%N|%.f|%3f|%i|%%|%n%t",
                ["%Q|%q|%:z|%N|%.f|%3f|%i|%|\n\t"; 4],
            ),
            ("abc%", ["abc%"; 4]),
            ("%-", ["%-"; 4]),
        ];
        for (format, expected) in cases {
            for (time, expected) in times.iter().zip(expected) {
                assert_eq!(
                    strftime(time, format, (false, None)).unwrap(),
                    *expected,
                    "{format} at {time}"
                );
            }
        }
    }

    #[test]
    fn zone_aware_and_naive() {
        // CPython 3.11: an aware UTC datetime prints `UTC` and `+0000`; the
        // naive `datetime.now()` of `transformers` prints nothing.
        let time = at("2024-03-05T09:07:03+00:00[UTC]");
        assert_eq!(
            strftime(&time, "%Z|%z", (false, None)).unwrap(),
            "UTC|+0000"
        );
        assert_eq!(strftime(&time, "%Z|%z", (true, None)).unwrap(), "|");
        let time = at("2024-03-05T09:07:03+05:30[Asia/Kolkata]");
        assert_eq!(
            strftime(&time, "%Z|%z|%H", (false, None)).unwrap(),
            "IST|+0530|09"
        );
    }
}
