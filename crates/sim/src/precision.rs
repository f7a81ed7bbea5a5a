//! Mixed precision, emulated exactly: where a mixed-precision framework stores a 16-bit tensor,
//! the engine rounds the value to that format and goes on computing in its own precision.
//!
//! Rounding is IEEE 754's round to nearest, ties to even, done once from the engine's value (an
//! f64 is rounded straight to 16 bits, not through f32, which could round twice). fp16 keeps its
//! range: values from 65520 up overflow to infinity, and small values lose bits gradually through
//! the subnormals (2^-24 is the smallest) before they become zero. bf16 has f32's range and 8
//! bits of precision. NaN stays NaN, infinities stay infinite, and zero keeps its sign.

use serde::{Deserialize, Serialize};

use crate::real::Real;

/// The format of the tensors that mixed precision stores in 16 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// No rounding: every value stays in the engine's own precision (f32, or f64 for the
    /// reference engine), as today.
    #[default]
    F32,
    /// bfloat16: f32's exponent range, 8 significant bits.
    Bf16,
    /// IEEE half precision: 11 significant bits, largest finite value 65504.
    Fp16,
}

/// What rounding a tensor did to its nonzero finite values: the figures the Lab shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoundingCounts {
    /// Nonzero finite values before rounding.
    pub nonzero: usize,
    /// Of those, how many became exactly zero (underflow).
    pub became_zero: usize,
    /// Of those, how many became infinite (overflow: from 65520 in fp16, from about 3.396e38,
    /// just under f32's largest value, in bf16).
    pub became_infinite: usize,
}

impl RoundingCounts {
    /// The fraction of nonzero values that underflowed to zero (0 where there were none).
    pub fn underflow_fraction(self) -> f64 {
        if self.nonzero == 0 {
            0.0
        } else {
            self.became_zero as f64 / self.nonzero as f64
        }
    }

    /// Both counts together, as when a step's micro-batches are added up.
    pub fn plus(self, other: Self) -> Self {
        Self {
            nonzero: self.nonzero + other.nonzero,
            became_zero: self.became_zero + other.became_zero,
            became_infinite: self.became_infinite + other.became_infinite,
        }
    }
}

impl Precision {
    pub const ALL: [Precision; 3] = [Precision::F32, Precision::Bf16, Precision::Fp16];

    /// The name used in settings, URLs and exports.
    pub const fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
        }
    }

    /// The setting named `name`, as [`Precision::name`] writes it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Bytes a stored value takes in this format (4 for f32).
    pub const fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::Bf16 | Precision::Fp16 => 2,
        }
    }

    /// `x` rounded to this format, in the engine's type.
    pub fn round<T: Real>(self, x: T) -> T {
        // `half`'s conversion from f64 was seen to round a value just above a tie down (the
        // edge test below), so an f64 is first narrowed to f32 rounding to odd, which keeps
        // enough of what was lost for `half`'s f32 conversion to equal one rounding of the f64
        // (f32 has 13 bits more than fp16, 16 more than bf16); an f32 passes through unchanged.
        let narrowed = || f32_rounded_to_odd(x.to_f64());
        match self {
            Precision::F32 => x,
            Precision::Bf16 => T::from_f64(half::bf16::from_f32(narrowed()).to_f64()),
            Precision::Fp16 => T::from_f64(half::f16::from_f32(narrowed()).to_f64()),
        }
    }

    /// Rounds every value in place and counts what became zero or infinite.
    pub fn round_in_place<T: Real>(self, values: &mut [T]) -> RoundingCounts {
        let mut counts = RoundingCounts::default();
        if self == Precision::F32 {
            return counts;
        }
        for v in values {
            let before = *v;
            let after = self.round(before);
            let finite_nonzero = before != T::ZERO && before.to_f64().is_finite();
            if finite_nonzero {
                counts.nonzero += 1;
                if after == T::ZERO {
                    counts.became_zero += 1;
                } else if after.to_f64().is_infinite() {
                    counts.became_infinite += 1;
                }
            }
            *v = after;
        }
        counts
    }
}

/// `x` rounded to f32 toward zero, with the last bit set when that lost anything (round to odd).
fn f32_rounded_to_odd(x: f64) -> f32 {
    let nearest = x as f32;
    if f64::from(nearest) == x || x.is_nan() {
        return nearest;
    }
    let toward_zero = if f64::from(nearest).abs() > x.abs() {
        // One step toward zero: the magnitude's bits minus one (f32::MAX from infinity).
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    };
    f32::from_bits(toward_zero.to_bits() | 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    /// A 16-bit format described by its field widths, decoded by formula: the reference the
    /// rounding is checked against, independent of the `half` crate.
    struct Format {
        precision: Precision,
        exponent_bits: u32,
        mantissa_bits: u32,
    }

    const FP16: Format = Format {
        precision: Precision::Fp16,
        exponent_bits: 5,
        mantissa_bits: 10,
    };
    const BF16: Format = Format {
        precision: Precision::Bf16,
        exponent_bits: 8,
        mantissa_bits: 7,
    };

    impl Format {
        fn bias(&self) -> i32 {
            (1 << (self.exponent_bits - 1)) - 1
        }

        /// Every finite non-negative value, ascending, each with whether its significand is
        /// even; then the value one step past the largest, which stands for infinity (IEEE
        /// rounds to infinity exactly where it would round to that value).
        fn ladder(&self) -> Vec<(f64, bool)> {
            let mut values = Vec::new();
            let max_exponent = (1u32 << self.exponent_bits) - 1;
            for e in 0..max_exponent {
                for m in 0..(1u32 << self.mantissa_bits) {
                    let value = if e == 0 {
                        f64::from(m) * 2f64.powi(1 - self.bias() - self.mantissa_bits as i32)
                    } else {
                        (1.0 + f64::from(m) / 2f64.powi(self.mantissa_bits as i32)) * 2f64.powi(e as i32 - self.bias())
                    };
                    values.push((value, m % 2 == 0));
                }
            }
            values.push((2f64.powi(max_exponent as i32 - self.bias()), true));
            values
        }

        /// Round to nearest, ties to even, by search over the ladder.
        fn reference(&self, ladder: &[(f64, bool)], x: f64) -> f64 {
            if x.is_nan() || x.is_infinite() || x == 0.0 {
                return x;
            }
            let magnitude = x.abs();
            let top = ladder[ladder.len() - 1].0;
            let rounded = if magnitude >= top {
                f64::INFINITY
            } else {
                let above = ladder.partition_point(|&(v, _)| v < magnitude);
                let (high, high_even) = ladder[above];
                if high == magnitude {
                    high
                } else {
                    let (low, _) = ladder[above - 1];
                    // Exact: both distances are differences of nearby dyadic numbers.
                    let (down, up) = (magnitude - low, high - magnitude);
                    let value = if down < up || (down == up && !high_even) {
                        low
                    } else {
                        high
                    };
                    if value == top {
                        f64::INFINITY
                    } else {
                        value
                    }
                }
            };
            rounded.copysign(x)
        }

        /// Inputs of every class: the format's values and their midpoints (ties, both ways to
        /// even), points just off the midpoints, subnormals and the underflow edge, the overflow
        /// edge, huge and tiny values, signed zeros and infinities, and random f32 values.
        fn inputs(&self, ladder: &[(f64, bool)]) -> Vec<f64> {
            let mut inputs = vec![
                0.0,
                -0.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e300,
                1e-300,
                f64::MIN_POSITIVE,
            ];
            let step = (ladder.len() / 4000).max(1);
            let mut pick: Vec<usize> = (0..ladder.len() - 1).step_by(step).collect();
            // Every subnormal edge and the top of the range, whatever the stride skipped.
            pick.extend(0..8);
            pick.extend(ladder.len() - 8..ladder.len() - 1);
            for i in pick {
                let (low, high) = (ladder[i].0, ladder[i + 1].0);
                let middle = (low + high) / 2.0;
                let nudge = (high - low) * 2f64.powi(-30);
                inputs.extend([low, middle, middle - nudge, middle + nudge, low + nudge]);
            }
            let mut rng = SeededRng::new(16);
            for _ in 0..20_000 {
                let bits = (rng.next_u64() >> 32) as u32;
                let x = f32::from_bits(bits);
                if x.is_finite() {
                    inputs.push(f64::from(x));
                }
            }
            inputs.extend(inputs.clone().into_iter().map(|x| -x));
            inputs
        }
    }

    fn same(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    #[test]
    fn rounding_matches_the_reference_for_every_class_of_value_in_f64_and_f32() {
        for format in [FP16, BF16] {
            let ladder = format.ladder();
            let mut checked = 0;
            for x in format.inputs(&ladder) {
                let expected = format.reference(&ladder, x);
                let got = format.precision.round(x);
                assert!(
                    same(got, expected),
                    "{:?}: {x:e} gave {got:e}, expected {expected:e}",
                    format.precision
                );
                // The f32 engine rounds its own value: check wherever x is an f32.
                let single = x as f32;
                if f64::from(single) == x {
                    let got = format.precision.round(single);
                    assert!(
                        same(f64::from(got), expected),
                        "{:?} from f32: {x:e} gave {got:e}",
                        format.precision
                    );
                }
                checked += 1;
            }
            assert!(checked > 40_000, "{checked} inputs");
        }
    }

    #[test]
    fn the_edges_of_fp16_round_as_ieee_says() {
        let round = |x: f64| Precision::Fp16.round(x);
        assert_eq!(round(65504.0), 65504.0);
        assert_eq!(round(65519.99), 65504.0);
        assert_eq!(
            round(65520.0),
            f64::INFINITY,
            "the midpoint to 2^16 rounds to even: infinity"
        );
        assert_eq!(round(2f64.powi(-24)), 2f64.powi(-24), "the smallest subnormal");
        assert_eq!(round(2f64.powi(-25)), 0.0, "half of it is a tie, and zero is even");
        assert_eq!(round(1.5 * 2f64.powi(-25)), 2f64.powi(-24));
        assert_eq!(round(1.0 + 2f64.powi(-11)), 1.0, "a tie goes to the even significand");
        assert_eq!(round(1.0 + 3.0 * 2f64.powi(-11)), 1.0 + 2f64.powi(-9));
        assert!(round(-0.0).is_sign_negative());
        assert!(round(f64::NAN).is_nan());
        assert!(Precision::Bf16.round(f64::NAN).is_nan());
        assert!(Precision::Bf16.round(f32::NAN).is_nan());
        // Single rounding from f64: just above a tie goes up, though through f32 it would
        // first land on the tie and then go to even.
        let above_tie = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(round(above_tie), 1.0 + 2f64.powi(-10));
    }

    #[test]
    fn counts_say_what_underflowed_and_overflowed() {
        let mut values = [1.0f32, 1e-8, -1e-9, 0.0, 7e4, 3.0e-8, f32::INFINITY];
        let counts = Precision::Fp16.round_in_place(&mut values);
        // 1e-8 and -1e-9 are under half the smallest subnormal (2.98e-8); 3.0e-8 is just over.
        assert_eq!(
            counts,
            RoundingCounts {
                nonzero: 5,
                became_zero: 2,
                became_infinite: 1
            }
        );
        assert_eq!(values[..4], [1.0, 0.0, -0.0, 0.0]);
        assert_eq!(values[5], 2f32.powi(-24));
        assert!((counts.underflow_fraction() - 0.4).abs() < 1e-15);
        let mut unchanged = [1e-30f32, 1e30];
        assert_eq!(Precision::F32.round_in_place(&mut unchanged), RoundingCounts::default());
        assert_eq!(unchanged, [1e-30, 1e30]);
        assert_eq!(
            Precision::Bf16.round_in_place(&mut unchanged).became_zero,
            0,
            "bf16 has f32's range"
        );
    }

    #[test]
    fn names_round_trip() {
        for p in Precision::ALL {
            assert_eq!(Precision::from_name(p.name()), Some(p));
            let json = serde_json::to_string(&p).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", p.name()));
        }
        assert_eq!(Precision::from_name("fp8"), None);
    }
}
