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
