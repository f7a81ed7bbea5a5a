//! The scalar type of the CPU reference: `f32` (what the app trains with) or `f64` (what tests check with).
//!
//! Every transcendental goes through `libm`, a pure-Rust implementation, so the same inputs give
//! bit-identical outputs on native targets and on wasm32 (std's `sin`/`exp` use the platform's libm natively).

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A floating-point scalar the reference engine can compute in.
pub trait Real:
    Copy
    + Debug
    + Default
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    const ZERO: Self;
    const ONE: Self;
    /// Size of one value in bytes, for the activation-memory model.
    const BYTES: usize;
    /// Short name used in reports (`"f32"`, `"f64"`).
    const NAME: &'static str;

    fn from_f64(value: f64) -> Self;
    fn to_f64(self) -> f64;
    fn from_usize(value: usize) -> Self {
        Self::from_f64(value as f64)
    }
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn tanh(self) -> Self;
    fn sqrt(self) -> Self;
    fn abs(self) -> Self {
        if self < Self::ZERO {
            -self
        } else {
            self
        }
    }
    fn max(self, other: Self) -> Self {
        if other > self {
            other
        } else {
            self
        }
    }
    fn powi(self, exponent: i32) -> Self;

    /// `exp` of every value, in place. By default each through [`Real::exp`]; f32 overrides it
    /// with [`exp_f32`], which the compiler vectorizes (the tiny GPT's hot loops: softmax and
    /// GELU). f64 keeps libm's, so that the f64 reference stays the accurate one.
    fn exp_in_place(values: &mut [Self]) {
        for v in values {
            *v = v.exp();
        }
    }
}

/// `exp(x)` in f32 with plain arithmetic and bit operations (no call, no branch the compiler
/// cannot turn into a select), so that a loop of it vectorizes; the same bits on every target
/// (no fused multiply-add). Within 2 units in the last place of the exact value for
/// `x` in [-86.6, 88.7]; below, 0 (exp there is under 2.4e-38); above, infinity; NaN stays NaN.
///
/// Cody and Waite's reduction: `x = k ln 2 + r` with `k` an integer and `|r| <= ln 2 / 2`, then
/// `exp(x) = 2^k exp(r)`, exp(r) by its Taylor polynomial to r^7 (truncation below 8e-9 relative).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split so that k · LN2_HI is exact for |k| < 2^8.
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // Adding 1.5 · 2^23 rounds to an integer, which then sits in the low bits of the mantissa.
    const SHIFTER: f32 = 12_582_912.0;
    const LOW: f32 = -86.6;
    const HIGH: f32 = 88.72;
    // NaN stays NaN through clamp.
    let clamped = x.clamp(LOW, HIGH);
    let shifted = clamped * LOG2E + SHIFTER;
    let k = shifted - SHIFTER;
    let r = (clamped - k * LN2_HI) - k * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // 2^(k - 1) as bits, then times 2: k reaches 128, whose power of two f32 lacks.
    let k_bits = shifted.to_bits().wrapping_sub(SHIFTER.to_bits());
    let half_scale = f32::from_bits(k_bits.wrapping_add(126) << 23);
    let value = p * half_scale * 2.0;
    if x < LOW {
        0.0
    } else if x > HIGH {
        f32::INFINITY
    } else {
        value
    }
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const BYTES: usize = 4;
    const NAME: &'static str = "f32";

    fn from_f64(value: f64) -> Self {
        value as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn exp(self) -> Self {
        libm::expf(self)
    }
    fn ln(self) -> Self {
        libm::logf(self)
    }
    fn tanh(self) -> Self {
        libm::tanhf(self)
    }
    fn sqrt(self) -> Self {
        libm::sqrtf(self)
    }
    fn powi(self, exponent: i32) -> Self {
        libm::powf(self, exponent as f32)
    }
    fn exp_in_place(values: &mut [Self]) {
        for v in values {
            *v = exp_f32(*v);
        }
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const BYTES: usize = 8;
    const NAME: &'static str = "f64";

    fn from_f64(value: f64) -> Self {
        value
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn exp(self) -> Self {
        libm::exp(self)
    }
    fn ln(self) -> Self {
        libm::log(self)
    }
    fn tanh(self) -> Self {
        libm::tanh(self)
    }
    fn sqrt(self) -> Self {
        libm::sqrt(self)
    }
    fn powi(self, exponent: i32) -> Self {
        libm::pow(self, f64::from(exponent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_f32_is_within_two_units_in_the_last_place_of_the_exact_value() {
        let mut worst = 0.0f64;
        let mut x = -86.6f32;
        while x <= 88.7 {
            let exact = libm::exp(f64::from(x));
            let ulp = f64::from(f32::EPSILON) * exact;
            worst = worst.max((f64::from(exp_f32(x)) - exact).abs() / ulp);
            x += 0.000_731;
        }
        assert!(worst <= 2.0, "worst error {worst} units in the last place");
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-100.0), 0.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(89.0), f32::INFINITY);
        assert!(exp_f32(f32::NAN).is_nan());
        assert!(exp_f32(88.72).is_finite());
    }
}
