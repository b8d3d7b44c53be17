//! A small line plot as SVG (for `irs bench overhead` and `irs demo`): one polyline per series,
//! axes with ticks, a legend, and optional labelled vertical markers. No plotting crate needed
//! for this much.

use std::fmt::Write;

pub struct Series {
    pub name: String,
    /// (x, y) points, drawn in x order.
    pub points: Vec<(f64, f64)>,
}

const COLORS: [&str; 10] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

fn nice_ticks(max: f64) -> Vec<f64> {
    if max <= 0.0 {
        return vec![0.0];
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    (0..).map(|i| i as f64 * step).take_while(|v| *v <= max * 1.0001 + step).collect()
}

/// A labelled vertical line at `x` (an event on the x axis, such as "bug found").
pub struct Marker {
    pub x: f64,
    pub label: String,
}

/// An SVG document: `title`, axis labels, the series.
pub fn line_plot(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    line_plot_marked(title, x_label, y_label, series, &[])
}

/// [`line_plot`] with vertical markers, each labelled at the top of the plot.
pub fn line_plot_marked(title: &str, x_label: &str, y_label: &str, series: &[Series], markers: &[Marker]) -> String {
    let (w, h, left, right, top, bottom) = (820.0, 500.0, 70.0, 220.0, 40.0, 50.0);
    let max_x = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).chain(markers.iter().map(|m| m.x)).fold(1.0f64, f64::max);
    let min_y = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0f64, f64::min);
    let max_y = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(1.0f64, f64::max);
    let yt = nice_ticks(max_y);
    let top_y = *yt.last().unwrap_or(&max_y);
    let xt = nice_ticks(max_x);
    let right_x = *xt.last().unwrap_or(&max_x);
    let px = |x: f64| left + (x / right_x) * (w - left - right);
    let py = |y: f64| h - bottom - ((y - min_y.min(0.0)) / (top_y - min_y.min(0.0)).max(1e-9)) * (h - top - bottom);
    let mut s = String::new();
    let _ = writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#);
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#, (w - right + left) / 2.0, esc(title));
    for y in &yt {
        let (x2, yy, tx, ty) = (w - right, py(*y), left - 6.0, py(*y) + 4.0);
        let _ = writeln!(s, r##"<line x1="{left}" x2="{x2}" y1="{yy}" y2="{yy}" stroke="#ddd"/><text x="{tx}" y="{ty}" text-anchor="end">{y}</text>"##);
    }
    for x in &xt {
        let (y2, xx, ty) = (h - bottom, px(*x), h - bottom + 16.0);
        let _ = writeln!(s, r##"<line y1="{top}" y2="{y2}" x1="{xx}" x2="{xx}" stroke="#eee"/><text x="{xx}" y="{ty}" text-anchor="middle">{x}</text>"##);
    }
    let _ = writeln!(s, r#"<line x1="{left}" x2="{left}" y1="{top}" y2="{}" stroke="black"/><line x1="{left}" x2="{}" y1="{}" y2="{}" stroke="black"/>"#, h - bottom, w - right, py(0.0), py(0.0));
    let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, (w - right + left) / 2.0, h - 10.0, esc(x_label));
    let _ = writeln!(s, r#"<text transform="translate(18,{}) rotate(-90)" text-anchor="middle">{}</text>"#, (h - bottom + top) / 2.0, esc(y_label));
    for (i, m) in markers.iter().enumerate() {
        let (xx, y2, ty) = (px(m.x), h - bottom, top + 12.0 + (i % 3) as f64 * 13.0);
        let _ = writeln!(s, r##"<line x1="{xx:.1}" x2="{xx:.1}" y1="{top}" y2="{y2}" stroke="#555" stroke-dasharray="4,3"/><text x="{:.1}" y="{ty}" font-size="11">{}</text>"##, xx + 3.0, esc(&m.label));
    }
    for (i, se) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let mut pts = se.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let poly: Vec<String> = pts.iter().map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y))).collect();
        let _ = writeln!(s, r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#, poly.join(" "));
        for (x, y) in &pts {
            let _ = writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{c}"/>"#, px(*x), py(*y));
        }
        let ly = top + 10.0 + i as f64 * 18.0;
        let _ = writeln!(s, r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{c}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#, w - right + 15.0, w - right + 40.0, w - right + 46.0, ly + 4.0, esc(&se.name));
    }
    s.push_str("</svg>\n");
    s
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn plots_series_with_legend() {
        let svg = line_plot("t", "x", "y", &[Series { name: "a<b".into(), points: vec![(0.0, 1.0), (4.0, 10.0)] }]);
        assert!(svg.starts_with("<svg") && svg.contains("<polyline") && svg.contains("a&lt;b"));
        assert_eq!(nice_ticks(9.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let marked = line_plot_marked("t", "x", "y", &[], &[Marker { x: 3.0, label: "bug & found".into() }]);
        assert!(marked.contains("stroke-dasharray") && marked.contains("bug &amp; found") && marked.ends_with("</svg>\n"));
    }
}
