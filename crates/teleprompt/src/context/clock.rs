//! The clock behind `system.*`: injectable, so tests and the CLI can fix the time.
//!
//! Every `system.*` value is computed from one instant, first floored to the
//! whole second (toward the past, as Go's `time.Unix()` does), so the date,
//! the time, the RFC 3339 text and `date_unix` always agree. `date_unix_ms`
//! keeps the milliseconds (also floored, as Go's `UnixMilli()` does).

use jiff::civil::Weekday;
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use serde_json::{Map, Value};

use crate::diagnostics::{Error, ErrorClass};

/// Where the prompt context gets the current time.
///
/// ```
/// use teleprompt::context::Clock;
/// let fixed = Clock::Fixed("2026-11-21T09:05:03Z".parse().unwrap());
/// assert_eq!(fixed.now().as_second(), 1_795_251_903);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// The system clock, read at each build.
    #[default]
    System,
    /// Always this instant (tests, replays, the CLI's `--now`).
    Fixed(Timestamp),
}

impl Clock {
    /// A fixed clock from RFC 3339 text (`2026-11-21T09:05:03Z`, or with an
    /// offset such as `+01:00`), as the CLI's `--now` takes it. Text that is
    /// not a timestamp is an `input` error.
    ///
    /// ```
    /// use teleprompt::context::Clock;
    /// let clock = Clock::parse("2026-11-21T10:05:03+01:00")?;
    /// assert_eq!(clock, Clock::Fixed("2026-11-21T09:05:03Z".parse().unwrap()));
    /// assert!(Clock::parse("next tuesday").is_err());
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<Clock, Error> {
        text.trim().parse::<Timestamp>().map(Clock::Fixed).map_err(|error| {
            Error::new(
                ErrorClass::Input,
                format!("\"{text}\" is not an RFC 3339 timestamp (like 2026-11-21T09:05:03Z): {error}"),
            )
        })
    }

    /// The current instant by this clock.
    pub fn now(&self) -> Timestamp {
        match self {
            Clock::System => Timestamp::now(),
            Clock::Fixed(instant) => *instant,
        }
    }
}

/// The `system` namespace for `instant`: all values in UTC.
///
/// | key | example |
/// |---|---|
/// | `current_date` | `2026-11-21` |
/// | `current_time` | `09:05:03` |
/// | `current_datetime` | `2026-11-21T09:05:03Z` (RFC 3339, whole seconds) |
/// | `day_of_week` | `Saturday` |
/// | `date_rfc1123` | `Sat, 21 Nov 2026 09:05:03 UTC` (Go's `time.RFC1123` of a UTC time) |
/// | `date_unix` | `1795251903` |
/// | `date_unix_ms` | `1795251903250` |
/// | `local_datetime` | `2026-11-21 10:05:03 +01:00` in `time_zone` (Forge's `%Y-%m-%d %H:%M:%S %:z`) |
pub fn system_values(instant: Timestamp, time_zone: &TimeZone) -> Value {
    let whole = floor_to_second(instant);
    let utc = whole.to_zoned(TimeZone::UTC);
    let local = whole.to_zoned(time_zone.clone());
    let date = civil_date(&utc);
    let time = civil_time(&utc);
    let mut map = Map::new();
    map.insert("current_date".into(), Value::from(date.clone()));
    map.insert("current_time".into(), Value::from(time.clone()));
    map.insert(
        "current_datetime".into(),
        Value::from(format!("{date}T{time}Z")),
    );
    map.insert(
        "day_of_week".into(),
        Value::from(weekday_name(utc.weekday())),
    );
    map.insert("date_rfc1123".into(), Value::from(rfc1123(&utc)));
    map.insert("date_unix".into(), Value::from(whole.as_second()));
    map.insert("date_unix_ms".into(), Value::from(floor_millis(instant)));
    map.insert("local_datetime".into(), Value::from(local_datetime(&local)));
    Value::Object(map)
}

/// Forge's `%Y-%m-%d %H:%M:%S %:z`: `2026-11-21 10:05:03 +01:00`.
fn local_datetime(zoned: &Zoned) -> String {
    format!(
        "{} {} {}",
        civil_date(zoned),
        civil_time(zoned),
        offset_text(zoned.offset().seconds())
    )
}

/// `+HH:MM` / `-HH:MM` (`%:z`); seconds of historical offsets are dropped.
fn offset_text(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// `Sat, 21 Nov 2026 09:05:03 UTC`: Go's `time.RFC1123` layout
/// (`Mon, 02 Jan 2006 15:04:05 MST`), which prints `UTC` for a UTC time.
fn rfc1123(utc: &Zoned) -> String {
    format!(
        "{}, {:02} {} {} {} UTC",
        weekday_abbreviation(utc.weekday()),
        utc.day(),
        month_abbreviation(utc.month()),
        year_text(utc.year()),
        civil_time(utc)
    )
}

fn civil_date(zoned: &Zoned) -> String {
    format!(
        "{}-{:02}-{:02}",
        year_text(zoned.year()),
        zoned.month(),
        zoned.day()
    )
}

fn civil_time(zoned: &Zoned) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        zoned.hour(),
        zoned.minute(),
        zoned.second()
    )
}

/// Four digits for years 0–9999; a sign and four digits before year 0.
fn year_text(year: i16) -> String {
    if year < 0 {
        format!("-{:04}", year.unsigned_abs())
    } else {
        format!("{year:04}")
    }
}

/// The instant floored to its whole second (toward the past).
fn floor_to_second(instant: Timestamp) -> Timestamp {
    if instant.subsec_nanosecond() >= 0 {
        return Timestamp::from_second(instant.as_second()).unwrap_or(instant);
    }
    // jiff keeps the fraction's sign with the seconds: -1.5 s is (-1, -0.5 s).
    Timestamp::from_second(instant.as_second().saturating_sub(1)).unwrap_or(instant)
}

/// Milliseconds since the epoch, floored (Go's `UnixMilli`).
fn floor_millis(instant: Timestamp) -> i64 {
    let millis = instant.as_nanosecond().div_euclid(1_000_000);
    i64::try_from(millis).unwrap_or(if millis < 0 { i64::MIN } else { i64::MAX })
}

fn weekday_name(day: Weekday) -> &'static str {
    match day {
        Weekday::Monday => "Monday",
        Weekday::Tuesday => "Tuesday",
        Weekday::Wednesday => "Wednesday",
        Weekday::Thursday => "Thursday",
        Weekday::Friday => "Friday",
        Weekday::Saturday => "Saturday",
        Weekday::Sunday => "Sunday",
    }
}

fn weekday_abbreviation(day: Weekday) -> &'static str {
    weekday_name(day).get(..3).unwrap_or("")
}

fn month_abbreviation(month: i8) -> &'static str {
    match month {
        1 => "Jan",
        2 => "Feb",
        3 => "Mar",
        4 => "Apr",
        5 => "May",
        6 => "Jun",
        7 => "Jul",
        8 => "Aug",
        9 => "Sep",
        10 => "Oct",
        11 => "Nov",
        _ => "Dec",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::tz::Offset;
    use serde_json::json;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn every_format_for_one_instant() {
        let zone = TimeZone::fixed(Offset::from_seconds(5 * 3600 + 30 * 60).unwrap());
        let values = system_values(at("2026-11-21T09:05:03.250Z"), &zone);
        assert_eq!(
            values,
            json!({
                "current_date": "2026-11-21",
                "current_time": "09:05:03",
                "current_datetime": "2026-11-21T09:05:03Z",
                "day_of_week": "Saturday",
                "date_rfc1123": "Sat, 21 Nov 2026 09:05:03 UTC",
                "date_unix": 1_795_251_903,
                "date_unix_ms": 1_795_251_903_250_i64,
                "local_datetime": "2026-11-21 14:35:03 +05:30",
            })
        );
    }

    #[test]
    fn before_the_epoch_the_fraction_floors() {
        let values = system_values(at("1969-12-31T23:59:58.5Z"), &TimeZone::UTC);
        assert_eq!(values["current_time"], json!("23:59:58"));
        assert_eq!(values["date_unix"], json!(-2));
        assert_eq!(values["date_unix_ms"], json!(-1500));
        assert_eq!(
            values["date_rfc1123"],
            json!("Wed, 31 Dec 1969 23:59:58 UTC")
        );
    }

    #[test]
    fn negative_offsets_and_extreme_instants() {
        assert_eq!(offset_text(-(3 * 3600 + 30 * 60)), "-03:30");
        assert_eq!(offset_text(0), "+00:00");
        let east = TimeZone::fixed(Offset::from_seconds(25 * 3600 + 59 * 60 + 59).unwrap());
        let west = TimeZone::fixed(Offset::from_seconds(-(25 * 3600 + 59 * 60 + 59)).unwrap());
        for instant in [Timestamp::MIN, Timestamp::MAX] {
            for zone in [&TimeZone::UTC, &east, &west] {
                let values = system_values(instant, zone);
                assert!(values["local_datetime"].is_string());
            }
        }
        assert_eq!(
            system_values(Timestamp::MAX, &TimeZone::UTC)["current_datetime"],
            "9999-12-30T22:00:00Z"
        );
        assert_eq!(
            system_values(Timestamp::MIN, &TimeZone::UTC)["current_date"],
            "-9999-01-02"
        );
    }
}
