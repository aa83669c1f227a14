//! What the peers share: positional arguments, the current-thread runtime
//! and the one-line JSON result of bench/common.hpp.

use std::time::Duration;

pub const CT: &str = "tokio-current-thread";

/// Positional arguments: `str(0, "default")`, `num(1, 1000)`.
pub struct Args(pub Vec<String>);

impl Args {
    pub fn new() -> Self {
        Args(std::env::args().skip(1).collect())
    }
    pub fn str(&self, i: usize, default: &str) -> String {
        self.0.get(i).cloned().unwrap_or_else(|| default.to_string())
    }
    pub fn num(&self, i: usize, default: u64) -> u64 {
        match self.0.get(i) {
            None => default,
            Some(s) => s.replace('_', "").parse::<f64>().expect("numeric argument") as u64,
        }
    }
}

impl Default for Args {
    fn default() -> Self {
        Self::new()
    }
}

pub fn rt_current() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// {"bench":..,"impl":..,"variant":..,"n":..,"ns_per_op":..,"ops_per_s":..[, extra]}
pub fn emit(bench: &str, imp: &str, variant: &str, n: u64, elapsed: Duration, extra: &[(&str, f64)]) {
    let ns = elapsed.as_nanos() as f64 / n as f64;
    let mut line = format!(
        "{{\"bench\":\"{bench}\",\"impl\":\"{imp}\",\"variant\":\"{variant}\",\"n\":{n},\"ns_per_op\":{ns:.3},\"ops_per_s\":{:.3}",
        1e9 / ns
    );
    for (k, v) in extra {
        line += &format!(",\"{k}\":{v:.3}");
    }
    println!("{line}}}");
}
