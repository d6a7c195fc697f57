//! The progress bar on stderr: bytes, percent, URLs per second and ETA,
//! moved once per batch (never per line) from the engine's reports.

use indicatif::{ProgressDrawTarget, ProgressStyle};
use urikey::engine::Progress;

/// A progress bar, or nothing when progress is off.
pub struct ProgressBar {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressBar {
    /// A bar over `total` raw input bytes (a spinner when unknown), drawn on
    /// stderr at most 5 times a second; hidden when `enabled` is false.
    pub fn new(enabled: bool, total: Option<u64>) -> Self {
        if !enabled {
            return Self { bar: None };
        }
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
        Self { bar: Some(bar) }
    }

    /// Moves the bar to the bytes read and shows the line rate.
    pub fn update(&self, p: &Progress) {
        if let Some(bar) = &self.bar {
            bar.set_position(p.bytes_read);
            let secs = p.elapsed.as_secs_f64();
            if secs > 0.0 {
                bar.set_message(format!("{:.0} URLs/s", p.lines as f64 / secs));
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
