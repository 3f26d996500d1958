//! A test backend for the real draw loop: a `TestBackend` that calls a
//! hook each time a frame is finished (to count frames, or keep the last).

use ocview::app::run::FrameSink;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

type Hook = Box<dyn FnMut(&TestBackend) + Send>;

pub struct FrameProbe {
    pub inner: TestBackend,
    on_frame: Hook,
}

impl FrameProbe {
    pub fn new(
        width: u16,
        height: u16,
        on_frame: impl FnMut(&TestBackend) + Send + 'static,
    ) -> Self {
        FrameProbe {
            inner: TestBackend::new(width, height),
            on_frame: Box::new(on_frame),
        }
    }
}

impl Backend for FrameProbe {
    type Error = std::convert::Infallible;
    fn draw<'a, I: Iterator<Item = (u16, u16, &'a Cell)>>(
        &mut self,
        content: I,
    ) -> Result<(), Self::Error> {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(p)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()
    }
}

impl FrameSink for FrameProbe {
    fn end_frame(&mut self) -> std::io::Result<()> {
        (self.on_frame)(&self.inner);
        Ok(())
    }
    fn suspend(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn resume(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
