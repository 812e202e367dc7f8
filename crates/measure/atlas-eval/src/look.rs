//! What a screenshot shows, to recognise a screen by it: its pixels shrunk to a grid of grey
//! levels, each cell the mean of its block.
//!
//! Key design decision: **pixels, not bytes.** A client may decode and write the screenshot
//! again before a model sees it (Open-AutoGLM's phone-agent saves every one through PIL), or
//! scale it: the bytes change, the screen does not. A re-encoded screenshot has the same grid;
//! a scaled one a grid within a few grey levels in every cell; another screen differs by far
//! more in the cells where its boxes or words differ. So two looks are the same screen when no
//! cell differs by more than [`SAME_CELL`].

/// The grid's cells across and down, whatever the screenshot's size (a scaled screenshot keeps
/// its proportions, so its cells cover the same parts of the screen).
const GRID: (usize, usize) = (36, 72);

/// How far one cell's mean grey level may differ between two pictures of the same screen: a
/// scaled picture's blocks average the same pixels give or take their edges. A word that
/// differs changes its cells by tens of levels.
pub const SAME_CELL: u8 = 12;

/// A screenshot's grid of grey levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Look {
    cells: Vec<u8>,
}

impl Look {
    /// The look of `pixels`, `channels` bytes a pixel (1 grey, 2 grey and alpha, 3 RGB, 4 RGBA),
    /// `width`×`height`, row by row.
    pub fn of_pixels(pixels: &[u8], width: usize, height: usize, channels: usize) -> Option<Look> {
        let (gw, gh) = GRID;
        if width < gw || height < gh || channels == 0 || pixels.len() < width * height * channels {
            return None;
        }
        let mut sums = vec![0u64; gw * gh];
        let mut counts = vec![0u64; gw * gh];
        for y in 0..height {
            let row = y * gh / height * gw;
            for x in 0..width {
                let at = (y * width + x) * channels;
                let px = &pixels[at..at + channels];
                let grey = if channels >= 3 {
                    (u64::from(px[0]) * 299 + u64::from(px[1]) * 587 + u64::from(px[2]) * 114)
                        / 1000
                } else {
                    u64::from(px[0])
                };
                let cell = row + x * gw / width;
                sums[cell] += grey;
                counts[cell] += 1;
            }
        }
        let cells = sums
            .iter()
            .zip(&counts)
            .map(|(s, n)| (s / (*n).max(1)) as u8)
            .collect();
        Some(Look { cells })
    }

    /// The look of a PNG, of any colour type and depth; `None` for bytes that are not one.
    pub fn of_png(png: &[u8]) -> Option<Look> {
        let p = atlas_device_sim::render::decode_png(png)?;
        Look::of_pixels(&p.bytes, p.width, p.height, p.channels)
    }

    /// How many cells differ by more than [`SAME_CELL`]: 0 for pictures of the same screen.
    pub fn differing_cells(&self, other: &Look) -> usize {
        self.cells
            .iter()
            .zip(&other.cells)
            .filter(|(a, b)| a.abs_diff(**b) > SAME_CELL)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A screen of grey boxes, `w`×`h`, with a dark bar at `bar` (in hundredths of the height).
    fn screen(w: usize, h: usize, bar: usize) -> Vec<u8> {
        let mut rgb = vec![250u8; w * h * 3];
        for y in h * bar / 100..h * (bar + 5) / 100 {
            for x in w / 10..w * 9 / 10 {
                rgb[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&[40, 40, 40]);
            }
        }
        rgb
    }

    /// Scales `rgb` (`w`×`h`) to `nw`×`nh`, each pixel the mean of the ones it covers.
    fn scaled(rgb: &[u8], (w, h): (usize, usize), (nw, nh): (usize, usize)) -> Vec<u8> {
        let mut out = vec![0u8; nw * nh * 3];
        for y in 0..nh {
            for x in 0..nw {
                let (y0, y1) = (y * h / nh, ((y + 1) * h / nh).max(y * h / nh + 1));
                let (x0, x1) = (x * w / nw, ((x + 1) * w / nw).max(x * w / nw + 1));
                for c in 0..3 {
                    let mut sum = 0u32;
                    for sy in y0..y1 {
                        for sx in x0..x1 {
                            sum += u32::from(rgb[(sy * w + sx) * 3 + c]);
                        }
                    }
                    out[(y * nw + x) * 3 + c] = (sum / ((y1 - y0) * (x1 - x0)) as u32) as u8;
                }
            }
        }
        out
    }

    #[test]
    fn a_scaled_screen_is_the_same_screen_and_another_is_not() {
        let (w, h) = (1080, 2280);
        let one = Look::of_pixels(&screen(w, h, 30), w, h, 3).unwrap();
        let small = scaled(&screen(w, h, 30), (w, h), (540, 1140));
        assert_eq!(
            one.differing_cells(&Look::of_pixels(&small, 540, 1140, 3).unwrap()),
            0
        );
        let other = Look::of_pixels(&screen(w, h, 60), w, h, 3).unwrap();
        assert!(one.differing_cells(&other) > 10);
        // Too small to cover the grid, or short of pixels: no look.
        assert!(Look::of_pixels(&[0; 12], 2, 2, 3).is_none());
        assert!(Look::of_pixels(&[0; 10], w, h, 3).is_none());
        assert!(Look::of_png(b"not a png").is_none());
    }
}
