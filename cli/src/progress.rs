//! Progress for long work, on a terminal only: `check` and `test` over
//! projects, `snapshot` and `diff` over configurations. Nothing is drawn when
//! standard error is not a terminal (a pipe, a CI log) or under `--quiet`,
//! and the bar is cleared when the work ends, so the output stays the same.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar of `len` steps labelled `what`, when it would be seen.
    pub fn new(len: u64, what: &str) -> Progress {
        if !shown() || len == 0 {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        // One step (a single large project): a spinner with the time.
        let template = match (len, crate::io::color_stderr()) {
            (1, _) => "{spinner} {msg} {elapsed}",
            (_, true) => "{msg} [{bar:30.cyan/blue}] {pos}/{len} {elapsed}",
            (_, false) => "{msg} [{bar:30}] {pos}/{len} {elapsed}",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        if len == 1 {
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
        }
        bar.set_message(what.to_string());
        Progress(Some(bar))
    }

    /// One step done.
    pub fn tick(&self) {
        if let Some(b) = &self.0 {
            b.inc(1);
        }
    }

    /// Run `f` (which writes output) with the bar hidden, so lines and bar
    /// do not mix on the terminal.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.0 {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// The label of the step under way (a project's name).
    pub fn label(&self, what: &str) {
        if let Some(b) = &self.0 {
            b.set_message(what.to_string());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

/// Whether a bar would be seen: standard error is a terminal and `--quiet`
/// is off.
fn shown() -> bool {
    !crate::io::quiet() && std::io::stderr().is_terminal()
}
