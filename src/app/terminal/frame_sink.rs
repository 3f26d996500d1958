//! What the loop needs of a terminal beyond drawing: whole frames, alerts,
//! and handing the terminal to another program and back.

use std::io;

use ratatui::backend::Backend;

/// A backend that can bracket a frame (synchronized output, so the terminal
/// shows whole frames only). Test backends do nothing.
pub trait FrameSink: Backend {
    fn begin_frame(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn end_frame(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Ring the bell, send a notification or an OSC 52 copy (already made
    /// inert).
    fn alert(&mut self, _bytes: &[u8]) -> io::Result<()> {
        Ok(())
    }
    /// Give the terminal to another program (the pager, the editor). No
    /// default: a wrapper that forgot to pass it on would keep the terminal
    /// in raw mode under the pager.
    fn suspend(&mut self) -> io::Result<()>;
    /// Take it back.
    fn resume(&mut self) -> io::Result<()>;
}

impl FrameSink for ratatui::backend::TestBackend {
    fn suspend(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn resume(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: io::Write> FrameSink for ratatui::backend::CrosstermBackend<W> {
    fn begin_frame(&mut self) -> io::Result<()> {
        crossterm::queue!(self, crossterm::terminal::BeginSynchronizedUpdate)
    }
    fn end_frame(&mut self) -> io::Result<()> {
        crossterm::execute!(self, crossterm::terminal::EndSynchronizedUpdate)
    }
    fn alert(&mut self, bytes: &[u8]) -> io::Result<()> {
        io::Write::write_all(self, bytes)?;
        io::Write::flush(self)
    }
    fn suspend(&mut self) -> io::Result<()> {
        io::Write::flush(self)?;
        super::suspend()
    }
    fn resume(&mut self) -> io::Result<()> {
        super::resume()
    }
}
