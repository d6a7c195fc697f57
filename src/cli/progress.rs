//! Progress on stderr, moved once per batch (never per line) from the
//! engine's reports: a bar (bytes, percent, URLs per second and ETA) on a
//! terminal; with `--progress` on a stderr that is not a terminal (a log,
//! CI), a plain line every few seconds and one at the end.

use std::time::{Duration, Instant};

use indicatif::{ProgressDrawTarget, ProgressStyle};
use urikey::engine::Progress;

use super::report::say;

/// How often the plain progress line is printed by default.
pub const PLAIN_INTERVAL: Duration = Duration::from_secs(5);

/// Which progress display to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// None.
    Off,
    /// A bar redrawn in place (stderr is a terminal).
    Bar,
    /// A plain line every `interval` (for logs).
    Plain {
        /// Time between two lines.
        interval: Duration,
    },
}

/// A progress display, or nothing when progress is off.
pub struct ProgressBar {
    bar: Option<indicatif::ProgressBar>,
    plain: Option<Plain>,
}

/// The state of the plain display.
struct Plain {
    interval: Duration,
    total: Option<u64>,
    last: Instant,
    latest: Option<Progress>,
}

impl ProgressBar {
    /// A display over `total` raw input bytes (a spinner when unknown); the
    /// bar is drawn at most 5 times a second.
    pub fn new(mode: Mode, total: Option<u64>) -> Self {
        match mode {
            Mode::Off => Self {
                bar: None,
                plain: None,
            },
            Mode::Plain { interval } => Self {
                bar: None,
                plain: Some(Plain {
                    interval,
                    total,
                    last: Instant::now(),
                    latest: None,
                }),
            },
            Mode::Bar => {
                let target = ProgressDrawTarget::stderr_with_hz(5);
                let (bar, template) = match total {
                    Some(len) => (
                        indicatif::ProgressBar::with_draw_target(Some(len), target),
                        "{bytes}/{total_bytes} ({percent}%) {binary_bytes_per_sec} {msg} ETA {eta}",
                    ),
                    None => (
                        indicatif::ProgressBar::with_draw_target(None, target),
                        "{spinner} {bytes} {binary_bytes_per_sec} {msg}",
                    ),
                };
                if let Ok(style) = ProgressStyle::with_template(template) {
                    bar.set_style(style);
                }
                Self {
                    bar: Some(bar),
                    plain: None,
                }
            }
        }
    }

    /// Moves the display to the bytes read and shows the line rate.
    pub fn update(&mut self, p: &Progress) {
        if let Some(bar) = &self.bar {
            bar.set_position(p.bytes_read);
            let secs = p.elapsed.as_secs_f64();
            if secs > 0.0 {
                bar.set_message(format!("{:.0} URLs/s", p.lines as f64 / secs));
            }
        }
        if let Some(plain) = &mut self.plain {
            plain.latest = Some(*p);
            if plain.last.elapsed() >= plain.interval {
                plain.last = Instant::now();
                say!("progress: {}", plain_line(p, plain.total));
            }
        }
    }

    /// Removes the bar from the terminal; the plain display prints its last
    /// line.
    pub fn finish(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if let Some(plain) = self.plain.take() {
            if let Some(p) = plain.latest {
                say!("progress: {} (done)", plain_line(&p, plain.total));
            }
        }
    }

    /// Removes the bar without a last plain line (the run was interrupted).
    pub fn clear(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.plain = None;
    }
}

/// `1.2 MB of 3.4 MB (35%), 123456 lines, 98765 URLs/s, 1.2 s`.
fn plain_line(p: &Progress, total: Option<u64>) -> String {
    let secs = p.elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        p.lines as f64 / secs
    } else {
        0.0
    };
    let read = format!("{:.1} MB", p.bytes_read as f64 / 1e6);
    let of = match total.or(p.total_bytes) {
        Some(t) if t > 0 => format!(
            "{read} of {:.1} MB ({:.0}%)",
            t as f64 / 1e6,
            (p.bytes_read as f64 / t as f64 * 100.0).min(100.0)
        ),
        _ => read,
    };
    format!("{of}, {} lines, {rate:.0} URLs/s, {secs:.1} s", p.lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_plain_line_format() {
        let p = Progress {
            bytes_read: 1_500_000,
            total_bytes: Some(3_000_000),
            lines: 1000,
            elapsed: Duration::from_secs(2),
        };
        assert_eq!(
            plain_line(&p, None),
            "1.5 MB of 3.0 MB (50%), 1000 lines, 500 URLs/s, 2.0 s"
        );
        let mut unknown = p;
        unknown.total_bytes = None;
        assert_eq!(
            plain_line(&unknown, None),
            "1.5 MB, 1000 lines, 500 URLs/s, 2.0 s"
        );
    }
}
