//! The screenshot of a simulated screen: a PNG of the recorded size with each view's box drawn,
//! clickable views and text fields shaded, and each view's text written in it (typed text in its
//! field), so a vision model sees a screen it can read and its coordinates land on the widgets.
//!
//! Text needs a font with Chinese: the one `ATLAS_SIM_FONT` names, else Debian's WenQuanYi Micro
//! Hei or Noto CJK where installed (`scripts/test.sh` installs `fonts-wqy-microhei`). Without one
//! the boxes are drawn alone.

use std::collections::HashMap;
use std::io::Write;

use crate::app::View;

const LINE: [u8; 3] = [120, 120, 120];
const INK: [u8; 3] = [30, 30, 30];

/// Fonts looked for, in order, when `ATLAS_SIM_FONT` names none.
const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
];

/// A font to write the views' text with.
pub struct Glyphs {
    font: fontdue::Font,
}

impl Glyphs {
    /// The font `ATLAS_SIM_FONT` names, else the first installed of [`FONT_PATHS`].
    pub fn find() -> Option<Glyphs> {
        let named = std::env::var_os("ATLAS_SIM_FONT").map(std::path::PathBuf::from);
        let candidates = named
            .into_iter()
            .chain(FONT_PATHS.iter().map(std::path::PathBuf::from));
        for path in candidates {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            match fontdue::Font::from_bytes(bytes, fontdue::FontSettings::default()) {
                Ok(font) => return Some(Glyphs { font }),
                Err(e) => tracing::warn!("font {}: {e}", path.display()),
            }
        }
        None
    }
}
const CLICKABLE: [u8; 3] = [225, 235, 250];
const FIELD: [u8; 3] = [240, 240, 240];
const TYPED: [u8; 3] = [200, 230, 200];

/// The PNG of a `width`×`height` screen showing `views`.
pub fn screen_png(
    width: u32,
    height: u32,
    views: &[View],
    typed: &HashMap<[[i64; 2]; 2], String>,
    glyphs: Option<&Glyphs>,
) -> Vec<u8> {
    encode_png(
        width,
        height,
        &screen_pixels(width, height, views, typed, glyphs),
    )
}

/// The pixels of [`screen_png`]: RGB, row by row.
pub fn screen_pixels(
    width: u32,
    height: u32,
    views: &[View],
    typed: &HashMap<[[i64; 2]; 2], String>,
    glyphs: Option<&Glyphs>,
) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    let mut pixels = vec![255u8; w * h * 3];
    let mut fill = |[[l, t], [r, b]]: [[i64; 2]; 2], colour: [u8; 3], outline_only: bool| {
        let clamp = |v: i64, max: usize| v.clamp(0, max as i64) as usize;
        let (l, t, r, b) = (clamp(l, w), clamp(t, h), clamp(r, w), clamp(b, h));
        for y in t..b {
            for x in l..r {
                let edge = y == t || y + 1 == b || x == l || x + 1 == r;
                if outline_only && !edge {
                    continue;
                }
                let at = (y * w + x) * 3;
                pixels[at..at + 3].copy_from_slice(&colour);
            }
        }
    };
    let mut ordered: Vec<&View> = views
        .iter()
        .filter(|v| v.is_shown() && v.bounds.is_some())
        .collect();
    // Larger views first, so smaller ones are drawn over them.
    ordered.sort_by_key(|v| std::cmp::Reverse(v.area()));
    for view in ordered {
        let bounds = view.bounds.unwrap_or_default();
        let shade = if typed.get(&bounds).is_some_and(|t| !t.is_empty()) {
            Some(TYPED)
        } else if view.editable {
            Some(FIELD)
        } else if view.clickable {
            Some(CLICKABLE)
        } else {
            None
        };
        if let Some(colour) = shade {
            fill(bounds, colour, false);
        }
        let has_text = view.text.as_deref().is_some_and(|t| !t.is_empty());
        if has_text || view.clickable || view.editable {
            fill(bounds, LINE, true);
        }
        // A switch or box shows its state, as a phone's does: a square at its right end,
        // filled when checked — what a model reading the screenshot checks its tap by.
        if view.checkable {
            let [[_, t], [r, b]] = bounds;
            let side = ((b - t) / 2).clamp(4, 48);
            let (top, right) = (t + (b - t - side) / 2, r - side / 2);
            let square = [[right - side, top], [right, top + side]];
            fill(square, LINE, true);
            if view.checked {
                fill(
                    [[square[0][0] + 2, top + 2], [right - 2, top + side - 2]],
                    INK,
                    false,
                );
            }
        }
    }
    if let Some(glyphs) = glyphs {
        for view in views.iter().filter(|v| v.is_shown()) {
            let Some(bounds) = view.bounds else { continue };
            // A field typed into shows what was typed, nothing when it was cleared.
            let text = match typed.get(&bounds) {
                Some(t) => Some(t.clone()).filter(|t| !t.is_empty()),
                None => view.text.clone().filter(|t| !t.is_empty()),
            };
            if let Some(text) = text {
                write(&mut pixels, w, h, glyphs, &text, bounds);
            }
        }
    }
    pixels
}

/// Writes `text` in one line inside `bounds`, vertically centred, cut at the right edge.
fn write(
    pixels: &mut [u8],
    w: usize,
    h: usize,
    glyphs: &Glyphs,
    text: &str,
    [[l, t], [r, b]]: [[i64; 2]; 2],
) {
    let size = ((b - t) as f32 * 0.45).clamp(12.0, 44.0);
    let baseline = (t + b) / 2 + (size * 0.35) as i64;
    let mut x = l as f32 + 8.0;
    for c in text.chars() {
        let (metrics, coverage) = glyphs.font.rasterize(c, size);
        if x + metrics.width as f32 > (r - 4) as f32 {
            break;
        }
        let left = x as i64 + i64::from(metrics.xmin);
        let top = baseline - i64::from(metrics.ymin) - metrics.height as i64;
        for row in 0..metrics.height {
            for col in 0..metrics.width {
                let alpha = coverage[row * metrics.width + col] as f32 / 255.0;
                let (px, py) = (left + col as i64, top + row as i64);
                if alpha <= 0.0 || px < 0 || py < 0 || px >= w as i64 || py >= h as i64 {
                    continue;
                }
                let at = (py as usize * w + px as usize) * 3;
                for (channel, ink) in pixels[at..at + 3].iter_mut().zip(INK) {
                    *channel = (*channel as f32 * (1.0 - alpha) + ink as f32 * alpha) as u8;
                }
            }
        }
        x += metrics.advance_width;
    }
}

/// An RGB PNG: signature, IHDR, one zlib IDAT of filterless rows, IEND.
fn encode_png(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(rgb.len() + height as usize);
    for row in rgb.chunks(width as usize * 3) {
        raw.push(0);
        raw.extend_from_slice(row);
    }
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = encoder.write_all(&raw);
    let compressed = encoder.finish().unwrap_or_default();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &header);
    chunk(&mut png, b"IDAT", &compressed);
    chunk(&mut png, b"IEND", &[]);
    png
}

fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend((data.len() as u32).to_be_bytes());
    png.extend(kind);
    png.extend(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    png.extend(crc.finalize().to_be_bytes());
}

/// A picture's pixels, 8 bits a channel, row by row.
pub struct Pixels {
    /// The bytes: `channels` a pixel.
    pub bytes: Vec<u8>,
    /// Its width.
    pub width: usize,
    /// Its height.
    pub height: usize,
    /// Bytes a pixel: 1 grey, 2 grey and alpha, 3 RGB, 4 RGBA.
    pub channels: usize,
}

/// A screenshot's pixels, whatever its PNG's colour type and depth; `None` for bytes that are
/// not a PNG this can read. What reads a screenshot back (a model recognising a screen, a report
/// shrinking one) reads it here.
pub fn decode_png(png: &[u8]) -> Option<Pixels> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().ok()?;
    let mut bytes = vec![0; reader.output_buffer_size()?];
    let frame = reader.next_frame(&mut bytes).ok()?;
    let channels = match frame.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        // Normalised to colour, a palette is expanded before this.
        png::ColorType::Indexed => return None,
    };
    bytes.truncate(frame.buffer_size());
    Some(Pixels {
        bytes,
        width: frame.width as usize,
        height: frame.height as usize,
        channels,
    })
}
