//! Times as numbers: the graph keeps a transition's two times as seconds, eight bytes each instead
//! of a string of twenty and its allocation, and writes them back as the very text it was given.

/// The seconds since the Unix epoch of a time written the way every Atlas file writes one
/// (`YYYY-MM-DDTHH:MM:SSZ`, what [`crate::now_rfc3339`] gives); none for any other writing of a
/// time (a fraction, an offset, lower-case letters), so that [`rfc3339_of_seconds`] gives back the
/// very text. Whoever keeps other writings keeps them as text.
pub fn seconds_of_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'Z'
    {
        return None;
    }
    let number = |from: usize, to: usize| -> Option<i64> {
        b[from..to].iter().try_fold(0i64, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let (year, month, day) = (number(0, 4)?, number(5, 7)?, number(8, 10)?);
    let (hour, minute, second) = (number(11, 13)?, number(14, 16)?, number(17, 19)?);
    if !(1..=12).contains(&month) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    // A day the month does not have (the 31st of April) comes back as another date.
    if civil_from_days(days) != (year, month, day) {
        return None;
    }
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second)
}

/// The text [`seconds_of_rfc3339`] read those seconds from.
pub fn rfc3339_of_seconds(seconds: i64) -> String {
    let (days, in_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        in_day / 3_600,
        in_day % 3_600 / 60,
        in_day % 60
    )
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (Howard Hinnant's
/// algorithm: years counted from March, so the leap day ends a year).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `days` after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * march_month + 2) / 5 + 1;
    let month = if march_month < 10 {
        march_month + 3
    } else {
        march_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_chrono_reads_them_and_write_back_the_same_text() {
        // Every day from 1900 to 2100 at a few times of day, against chrono.
        let start = seconds_of_rfc3339("1900-01-01T00:00:00Z").unwrap();
        for day in 0..(201 * 366) {
            for in_day in [0, 1, 3_599, 43_210, 86_399] {
                let seconds = start + day * 86_400 + in_day;
                let text = rfc3339_of_seconds(seconds);
                let chrono = chrono::DateTime::from_timestamp(seconds, 0)
                    .unwrap()
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                assert_eq!(text, chrono);
                assert_eq!(seconds_of_rfc3339(&text), Some(seconds));
            }
        }
        let now = crate::now_rfc3339();
        assert_eq!(rfc3339_of_seconds(seconds_of_rfc3339(&now).unwrap()), now);
    }

    #[test]
    fn other_writings_of_a_time_are_not_read() {
        for other in [
            "2026-11-26T17:13:32.5Z",
            "2026-11-26T17:13:32+08:00",
            "2026-11-26t17:13:32z",
            "2026-04-31T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-11-26T24:00:00Z",
            "2026-11-26T17:60:00Z",
            "２０26-11-26T17:13:32Z",
            "",
            "yesterday",
        ] {
            assert_eq!(seconds_of_rfc3339(other), None, "{other}");
        }
        assert!(seconds_of_rfc3339("2024-02-29T00:00:00Z").is_some());
    }
}
