//! The screenshot of a simulated screen: a PNG of the recorded size with each view's box drawn,
//! clickable views and text fields shaded, so an image shows where the widgets are.
//!
//! Text is not drawn yet (that needs a font and a rasteriser); the boxes sit where the recorded
//! views sat, so a model's coordinates still land on them.

use std::collections::HashMap;
use std::io::Write;

use crate::app::View;

const LINE: [u8; 3] = [120, 120, 120];
const CLICKABLE: [u8; 3] = [225, 235, 250];
const FIELD: [u8; 3] = [240, 240, 240];
const TYPED: [u8; 3] = [200, 230, 200];

/// The PNG of a `width`×`height` screen showing `views`.
pub fn screen_png(
    width: u32,
    height: u32,
    views: &[View],
    typed: &HashMap<[[i64; 2]; 2], String>,
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
    let mut ordered: Vec<&View> = views.iter().filter(|v| v.bounds.is_some()).collect();
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
    }
    encode_png(width, height, &pixels)
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
