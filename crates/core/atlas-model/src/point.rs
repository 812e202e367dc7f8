//! A point on a screen in pixels, and the relative coordinates (0..999 on each axis, the
//! fraction of the screen) that Open-AutoGLM's models write: one conversion for the devices, the
//! agent and the screen tool, so a tap lands on the same pixel whichever of them made it.

/// A point on the screen, in pixels from the top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    /// Pixels from the left.
    pub x: u32,
    /// Pixels from the top.
    pub y: u32,
}

impl Point {
    /// The pixel a relative coordinate names (x/1000 of the width); `None` beyond 999.
    pub fn from_relative(x: u32, y: u32, width: u32, height: u32) -> Option<Point> {
        let scale = |v: u32, size: u32| (u64::from(v) * u64::from(size) / 1000) as u32;
        (x <= 999 && y <= 999).then(|| Point {
            x: scale(x, width),
            y: scale(y, height),
        })
    }

    /// The point in relative coordinates (0..999 on each axis): what a model would write for it.
    pub fn relative(self, width: u32, height: u32) -> [u16; 2] {
        let scale =
            |v: u32, size: u32| (u64::from(v) * 1000 / u64::from(size.max(1))).min(999) as u16;
        [scale(self.x, width), scale(self.y, height)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_coordinates_name_the_fraction_of_the_screen() {
        assert_eq!(Point { x: 540, y: 1200 }.relative(1080, 2400), [500, 500]);
        assert_eq!(Point { x: 1079, y: 2399 }.relative(1080, 2400), [999, 999]);
        assert_eq!(
            Point::from_relative(500, 999, 1080, 2400),
            Some(Point { x: 540, y: 2397 })
        );
        assert_eq!(Point::from_relative(1000, 0, 1080, 2400), None);
        assert_eq!(
            Point { x: 5, y: 5 }.relative(0, 0),
            [999, 999],
            "no division by zero"
        );
    }
}
