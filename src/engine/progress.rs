//! The progress bar on stderr: bytes, percent, URLs per second and ETA,
//! moved once per batch (never per line).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar, or nothing when progress is off.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar over `total` raw input bytes (a spinner when unknown), drawn on
    /// stderr at most 5 times a second; hidden when `enabled` is false.
    pub fn new(enabled: bool, total: Option<u64>) -> Self {
        if !enabled {
            return Self { bar: None };
        }
        let target = ProgressDrawTarget::stderr_with_hz(5);
        let bar = match total {
            Some(len) => {
                let bar = ProgressBar::with_draw_target(Some(len), target);
                let style = ProgressStyle::with_template(
                    "{bytes}/{total_bytes} ({percent}%) {binary_bytes_per_sec} {msg} ETA {eta}",
                );
                if let Ok(style) = style {
                    bar.set_style(style);
                }
                bar
            }
            None => {
                let bar = ProgressBar::with_draw_target(None, target);
                if let Ok(style) =
                    ProgressStyle::with_template("{spinner} {bytes} {binary_bytes_per_sec} {msg}")
                {
                    bar.set_style(style);
                }
                bar
            }
        };
        Self { bar: Some(bar) }
    }

    /// Moves the bar to `raw_bytes` and shows the line rate.
    pub fn update(&self, raw_bytes: u64, lines: u64, elapsed_secs: f64) {
        if let Some(bar) = &self.bar {
            bar.set_position(raw_bytes);
            if elapsed_secs > 0.0 {
                bar.set_message(format!("{:.0} URLs/s", lines as f64 / elapsed_secs));
            }
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
