//! As many colours as the terminal has. Every cell passes through
//! `DepthBackend` on its way out, so each colour (a theme's, syntect's, a
//! tool's own ANSI output) is brought down to the terminal's depth in this
//! one place: 24-bit, the nearest of 256, the nearest of 16, or none.

use std::io;

use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::style::Color;

use crate::app::terminal::frame_sink::FrameSink;

/// What the terminal can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    TrueColor,
    Ansi256,
    Ansi16,
    /// `NO_COLOR`: attributes only.
    None,
}

pub use crate::app::config::ColorSetting;

impl ColorDepth {
    /// The setting if it names a depth; else `NO_COLOR` (any value, per
    /// no-color.org), `COLORTERM=truecolor|24bit`, a `TERM` with 256 colours,
    /// and 16 for the rest.
    pub fn detect(setting: ColorSetting, env: impl Fn(&str) -> Option<String>) -> ColorDepth {
        match setting {
            ColorSetting::Truecolor => return ColorDepth::TrueColor,
            ColorSetting::Ansi256 => return ColorDepth::Ansi256,
            ColorSetting::Ansi16 => return ColorDepth::Ansi16,
            ColorSetting::None => return ColorDepth::None,
            ColorSetting::Auto => {}
        }
        if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return ColorDepth::None;
        }
        let colorterm = env("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" {
            return ColorDepth::TrueColor;
        }
        let term = env("TERM").unwrap_or_default();
        if term.contains("256color") || term.contains("direct") {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        }
    }

    pub fn from_env(setting: ColorSetting) -> ColorDepth {
        ColorDepth::detect(setting, |k| std::env::var(k).ok())
    }

    /// `color` as this depth can show it.
    pub fn convert(self, color: Color) -> Color {
        match (self, color) {
            (ColorDepth::TrueColor, c) => c,
            (ColorDepth::None, _) => Color::Reset,
            (ColorDepth::Ansi256, Color::Rgb(r, g, b)) => Color::Indexed(nearest_256(r, g, b)),
            (ColorDepth::Ansi256, c) => c,
            (ColorDepth::Ansi16, Color::Rgb(r, g, b)) => nearest_16(r, g, b),
            (ColorDepth::Ansi16, Color::Indexed(i)) if i >= 16 => {
                let (r, g, b) = index_rgb(i);
                nearest_16(r, g, b)
            }
            (ColorDepth::Ansi16, Color::Indexed(i)) => NAMED[i as usize],
            (ColorDepth::Ansi16, c) => c,
        }
    }
}

/// The 16 colours in index order, with the values xterm gives them (the
/// usual reference: each terminal's own palette differs a little).
const NAMED: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];
const NAMED_RGB: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (205, 0, 0),
    (0, 205, 0),
    (205, 205, 0),
    (0, 0, 238),
    (205, 0, 205),
    (0, 205, 205),
    (229, 229, 229),
    (127, 127, 127),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (92, 92, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
];

const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

fn distance((r1, g1, b1): (u8, u8, u8), (r2, g2, b2): (u8, u8, u8)) -> u32 {
    let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).unsigned_abs();
    // Weighted towards green, as the eye is: close enough for a terminal.
    2 * d(r1, r2).pow(2) + 4 * d(g1, g2).pow(2) + 3 * d(b1, b2).pow(2)
}

/// The RGB of a 256-colour index.
fn index_rgb(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => NAMED_RGB[i as usize],
        16..=231 => {
            let i = i - 16;
            (
                CUBE[(i / 36) as usize],
                CUBE[(i / 6 % 6) as usize],
                CUBE[(i % 6) as usize],
            )
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

/// The nearest of the 6×6×6 cube and the grey ramp (16–255; the first 16
/// are left out as each terminal sets them its own way).
fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    (16..=255u8)
        .min_by_key(|&i| distance(index_rgb(i), (r, g, b)))
        .unwrap_or(16)
}

fn nearest_16(r: u8, g: u8, b: u8) -> Color {
    let i = (0..16)
        .min_by_key(|&i| distance(NAMED_RGB[i], (r, g, b)))
        .unwrap_or(0);
    NAMED[i]
}

/// A backend that converts each cell's colours to `depth` before the inner
/// backend writes them.
pub struct DepthBackend<B> {
    pub inner: B,
    pub depth: ColorDepth,
    /// Colours already converted. Finding the nearest of 256 compares with
    /// each of them: done for every cell of a whole frame, that was most of
    /// the first frame's time (250 ms of a debug build in tmux). A screen
    /// holds a few dozen colours.
    converted: std::collections::HashMap<Color, Color>,
    /// What the screen shows, to write short unchanged gaps instead of
    /// moving the cursor over them.
    shadow: crate::app::terminal::gap_fill::Shadow,
}

/// Converted colours kept at most (a tool's 24-bit output could bring
/// many); beyond it the memo starts again.
const MAX_CONVERTED: usize = 4096;

impl<B> DepthBackend<B> {
    pub fn new(inner: B, depth: ColorDepth) -> DepthBackend<B> {
        DepthBackend {
            inner,
            depth,
            converted: Default::default(),
            shadow: Default::default(),
        }
    }

    fn convert(&mut self, color: Color) -> Color {
        if matches!(color, Color::Reset) {
            return self.depth.convert(color);
        }
        if let Some(c) = self.converted.get(&color) {
            return *c;
        }
        if self.converted.len() >= MAX_CONVERTED {
            self.converted.clear();
        }
        let c = self.depth.convert(color);
        self.converted.insert(color, c);
        c
    }
}

impl<B: Backend> Backend for DepthBackend<B> {
    type Error = B::Error;

    fn draw<'a, I: Iterator<Item = (u16, u16, &'a Cell)>>(
        &mut self,
        content: I,
    ) -> Result<(), Self::Error> {
        let convert = self.depth != ColorDepth::TrueColor;
        let cells: Vec<(u16, u16, Cell)> = content
            .map(|(x, y, cell)| {
                let mut cell = cell.clone();
                if convert {
                    cell.fg = self.convert(cell.fg);
                    cell.bg = self.convert(cell.bg);
                    cell.underline_color = self.convert(cell.underline_color);
                }
                (x, y, cell)
            })
            .collect();
        let cells = self.shadow.fill(cells);
        self.inner.draw(cells.iter().map(|(x, y, c)| (*x, *y, c)))
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
        self.shadow.cleared();
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> Result<(), Self::Error> {
        match t {
            ClearType::All => self.shadow.cleared(),
            _ => self.shadow.forget(),
        }
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

impl<B: FrameSink> FrameSink for DepthBackend<B> {
    fn begin_frame(&mut self) -> io::Result<()> {
        self.inner.begin_frame()
    }
    fn end_frame(&mut self) -> io::Result<()> {
        self.inner.end_frame()
    }
    fn alert(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.alert(bytes)
    }
    fn suspend(&mut self) -> io::Result<()> {
        // Another program takes the screen: what it shows is unknown.
        self.shadow.forget();
        self.inner.suspend()
    }
    fn resume(&mut self) -> io::Result<()> {
        self.inner.resume()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn depth_follows_the_environment_and_the_setting_wins() {
        let auto = ColorSetting::Auto;
        let detect = |vars: &[(&str, &str)]| ColorDepth::detect(auto, env(vars));
        assert_eq!(detect(&[("COLORTERM", "truecolor")]), ColorDepth::TrueColor);
        assert_eq!(detect(&[("COLORTERM", "24bit")]), ColorDepth::TrueColor);
        assert_eq!(detect(&[("TERM", "xterm-256color")]), ColorDepth::Ansi256);
        assert_eq!(detect(&[("TERM", "xterm")]), ColorDepth::Ansi16);
        assert_eq!(detect(&[]), ColorDepth::Ansi16);
        assert_eq!(
            detect(&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")]),
            ColorDepth::None
        );
        assert_eq!(detect(&[("NO_COLOR", "")]), ColorDepth::Ansi16);
        assert_eq!(
            ColorDepth::detect(ColorSetting::Ansi256, env(&[("COLORTERM", "truecolor")])),
            ColorDepth::Ansi256
        );
        assert_eq!(
            ColorDepth::detect(ColorSetting::Truecolor, env(&[("NO_COLOR", "1")])),
            ColorDepth::TrueColor
        );
    }

    #[test]
    fn colours_map_to_the_nearest_the_depth_has() {
        let c = Color::Rgb(0xfa, 0xb2, 0x83);
        assert_eq!(ColorDepth::TrueColor.convert(c), c);
        // #fab283 is nearest to 216 (#ffaf87) in the cube.
        assert_eq!(ColorDepth::Ansi256.convert(c), Color::Indexed(216));
        assert_eq!(
            ColorDepth::Ansi256.convert(Color::Rgb(0x0a, 0x0a, 0x0a)),
            Color::Indexed(232)
        );
        assert_eq!(
            ColorDepth::Ansi16.convert(Color::Rgb(250, 10, 10)),
            Color::LightRed
        );
        assert_eq!(
            ColorDepth::Ansi16.convert(Color::Indexed(196)),
            Color::LightRed
        );
        assert_eq!(ColorDepth::Ansi16.convert(Color::Indexed(4)), Color::Blue);
        assert_eq!(ColorDepth::Ansi16.convert(Color::Reset), Color::Reset);
        assert_eq!(ColorDepth::None.convert(c), Color::Reset);
        assert_eq!(ColorDepth::None.convert(Color::Red), Color::Reset);
    }

    #[test]
    fn the_backend_converts_every_cell() {
        use ratatui::backend::TestBackend;
        let mut b = DepthBackend::new(TestBackend::new(2, 1), ColorDepth::Ansi256);
        let mut cell = Cell::default();
        cell.set_symbol("x")
            .set_fg(Color::Rgb(255, 0, 0))
            .set_bg(Color::Rgb(0, 0, 0));
        b.draw([(0u16, 0u16, &cell)].into_iter()).unwrap();
        let out = &b.inner.buffer()[(0, 0)];
        assert_eq!(out.fg, Color::Indexed(196));
        assert_eq!(out.bg, Color::Indexed(16));
    }
}
