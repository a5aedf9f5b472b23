//! The inline viewport: a band of rows at the bottom of the transcript, on the terminal's normal
//! screen (no alternate screen), whose height follows its content.
//!
//! Finished transcript rows are printed just above the band ([`InlineTerminal::insert_rows`]): they
//! are written where the band was, the screen scrolls with ordinary newlines at its last row — so
//! the terminal keeps them in its own scrollback, to scroll, search and copy after Lathe exits —
//! and the band is drawn again below them. Frames are drawn by diffing against the previous frame,
//! so a spinner tick rewrites a handful of cells. The band grows by scrolling the screen and shrinks
//! by clearing the rows it gave up; on exit it is cleared and the cursor left under the transcript.
//!
//! Works on any ratatui [`Backend`]: crossterm for the real terminal, `TestBackend` in tests.

use ratatui::backend::{Backend, ClearType};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;

use super::view::ViewFrame;

/// The viewport and what is known about the screen.
pub struct InlineTerminal<B: Backend> {
    backend: B,
    screen: Size,
    top: u16,
    height: u16,
    previous: Buffer,
}

impl<B: Backend> InlineTerminal<B> {
    /// A viewport whose first row is `row` (the row under the shell prompt).
    pub fn new(backend: B, row: u16) -> Result<Self, B::Error> {
        let screen = backend.size()?;
        let top = row.min(screen.height.saturating_sub(1));
        Ok(InlineTerminal {
            backend,
            screen,
            top,
            height: 0,
            previous: Buffer::empty(Rect::new(0, top, screen.width, 0)),
        })
    }

    /// The backend (for tests).
    #[cfg(test)]
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The backend, mutably.
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// The screen size as last known.
    pub fn screen(&self) -> Size {
        self.screen
    }

    /// The viewport's area on the screen.
    pub fn area(&self) -> Rect {
        Rect::new(0, self.top, self.screen.width, self.height)
    }

    /// The screen changed size: the viewport stays at the bottom if it was there (the terminal
    /// keeps the cursor row in view), else where it was, within the new screen; it is redrawn in
    /// full on the next frame.
    pub fn resize(&mut self, size: Size) -> Result<(), B::Error> {
        let at_bottom = self.top + self.height >= self.screen.height;
        self.screen = size;
        let height = self.height.min(size.height);
        self.height = height;
        self.top = if at_bottom {
            size.height.saturating_sub(height)
        } else {
            self.top.min(size.height.saturating_sub(height))
        };
        self.clear_from(self.top)?;
        self.invalidate();
        self.backend.flush()
    }

    /// Prints finished rows above the viewport, into the terminal's scrollback.
    pub fn insert_rows(&mut self, rows: &[Line<'static>]) -> Result<(), B::Error> {
        if rows.is_empty() || self.screen.height == 0 || self.screen.width == 0 {
            return Ok(());
        }
        let width = self.screen.width;
        self.clear_from(self.top)?;
        let mut y = self.top;
        let blank = Buffer::empty(Rect::new(0, 0, width, 1));
        for row in rows {
            if y >= self.screen.height {
                self.scroll(1)?;
                y = self.screen.height - 1;
            }
            let mut buffer = Buffer::empty(Rect::new(0, 0, width, 1));
            buffer.set_line(0, 0, row, width);
            let cells: Vec<(u16, u16, ratatui::buffer::Cell)> =
                blank.diff(&buffer).into_iter().map(|(x, _, cell)| (x, y, cell.clone())).collect();
            self.backend.draw(cells.iter().map(|(x, y, cell)| (*x, *y, cell)))?;
            y += 1;
        }
        let needed = y + self.height;
        if needed > self.screen.height {
            self.scroll(needed - self.screen.height)?;
            y -= needed - self.screen.height;
        }
        self.top = y.min(self.screen.height.saturating_sub(1));
        self.invalidate();
        self.backend.flush()
    }

    /// Draws a frame: the viewport takes as many rows as the frame has (at most the screen), and
    /// the cursor is shown where the frame puts it, hidden otherwise.
    pub fn draw(&mut self, frame: &ViewFrame) -> Result<(), B::Error> {
        if self.screen.height == 0 || self.screen.width == 0 {
            return Ok(());
        }
        let height = (frame.rows.len() as u16).min(self.screen.height);
        self.set_height(height)?;
        let area = self.area();
        let mut buffer = Buffer::empty(area);
        for (index, row) in frame.rows.iter().take(usize::from(height)).enumerate() {
            buffer.set_line(0, area.y + index as u16, row, area.width);
        }
        let changes = self.previous.diff(&buffer);
        self.backend.draw(changes.into_iter())?;
        self.previous = buffer;
        match frame.cursor {
            Some((x, y)) if y < height => {
                self.backend
                    .set_cursor_position(Position::new(x.min(area.width.saturating_sub(1)), area.y + y))?;
                self.backend.show_cursor()?;
            }
            _ => {
                self.backend.hide_cursor()?;
                self.backend.set_cursor_position(Position::new(0, area.y))?;
            }
        }
        self.backend.flush()
    }

    /// Clears the viewport and leaves the cursor at its first row, visible (on exit, or before
    /// handing the terminal to another program).
    pub fn clear(&mut self) -> Result<(), B::Error> {
        self.clear_from(self.top)?;
        self.height = 0;
        self.invalidate();
        self.backend.show_cursor()?;
        self.backend.flush()
    }

    fn set_height(&mut self, height: u16) -> Result<(), B::Error> {
        if height == self.height {
            return Ok(());
        }
        if height > self.height {
            let bottom = self.top + height;
            if bottom > self.screen.height {
                let by = bottom - self.screen.height;
                self.scroll(by)?;
                self.top = self.top.saturating_sub(by);
            }
        }
        self.height = height;
        self.clear_from(self.top)?;
        self.invalidate();
        Ok(())
    }

    /// Scrolls the whole screen up by `lines` (newlines at the last row), so the top rows go to the
    /// scrollback.
    fn scroll(&mut self, lines: u16) -> Result<(), B::Error> {
        self.backend.set_cursor_position(Position::new(0, self.screen.height.saturating_sub(1)))?;
        self.backend.append_lines(lines)
    }

    /// Clears from the start of `row` to the end of the screen. Erasing "from the cursor to the end
    /// of the screen" at the top-left corner is erasing the whole screen, which some terminals
    /// (tmux's `scroll-on-clear`, on by default) answer by first scrolling the screen into the
    /// scrollback: there the first row is cleared on its own and the erase starts a row lower.
    fn clear_from(&mut self, row: u16) -> Result<(), B::Error> {
        self.backend.set_cursor_position(Position::new(0, row))?;
        if row > 0 {
            return self.backend.clear_region(ClearType::AfterCursor);
        }
        self.backend.clear_region(ClearType::CurrentLine)?;
        if self.screen.height > 1 {
            self.backend.set_cursor_position(Position::new(0, 1))?;
            self.backend.clear_region(ClearType::AfterCursor)?;
        }
        Ok(())
    }

    /// Forgets the previous frame so the next one is drawn in full.
    fn invalidate(&mut self) {
        self.previous = Buffer::empty(self.area());
    }
}

#[cfg(test)]
#[path = "terminal_tests.rs"]
mod tests;
