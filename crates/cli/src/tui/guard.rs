//! Terminal modes for the UI and their restoration on every way out.
//!
//! [`TerminalGuard::enter`] switches to raw mode, turns on bracketed paste and (where the terminal
//! supports it) the keyboard protocol that reports Shift+Enter; dropping the guard undoes all of it
//! and shows the cursor. A panic hook does the same before the panic message is printed, so a crash
//! never leaves the shell in raw mode; SIGTERM and SIGHUP are handled by the event loop, which
//! returns normally and so drops the guard.

use std::io::{Write, stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{disable_raw_mode, enable_raw_mode, supports_keyboard_enhancement};
use crossterm::{cursor, execute};

/// Whether the terminal is in the UI's modes (checked by the panic hook).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the keyboard enhancement flags were pushed.
static ENHANCED: AtomicBool = AtomicBool::new(false);

/// Holds the terminal in the UI's modes until dropped.
pub struct TerminalGuard(());

impl TerminalGuard {
    /// Enters raw mode with bracketed paste, and installs the panic hook (once).
    pub fn enter() -> std::io::Result<TerminalGuard> {
        install_panic_hook();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut out = stdout();
        execute!(out, EnableBracketedPaste)?;
        if supports_keyboard_enhancement().unwrap_or(false) {
            execute!(out, PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES))?;
            ENHANCED.store(true, Ordering::SeqCst);
        }
        Ok(TerminalGuard(()))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Leaves the UI's modes (idempotent): keyboard flags popped, bracketed paste off, raw mode off,
/// cursor shown.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(out, DisableBracketedPaste, cursor::Show);
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        // The panic message starts on a fresh line under the transcript.
        let _ = stdout().write_all(b"\r\n");
        previous(info);
    }));
}
