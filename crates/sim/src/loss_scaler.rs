//! A dynamic loss scaler with the semantics of PyTorch's `torch.amp.GradScaler`, for fp16
//! training with gradient accumulation.
//!
//! The documented use with accumulation: every micro-batch's loss is multiplied by the *same*
//! scale (`scaler.scale(loss / N).backward()`); at the accumulation boundary the gradients are
//! unscaled once (`unscale_`, a second call before `update` is an error), checked for inf/NaN,
//! clipped if wanted, and the optimizer steps only if all were finite (a skipped step leaves the
//! parameters and the optimizer's state untouched); then `update` changes the scale once: times
//! the backoff factor after an inf/NaN, times the growth factor after `growth_interval`
//! consecutive finite steps.
//!
//! As in PyTorch, the scale is an f32 (each change computed in f64 and rounded to f32, growth
//! kept only where that f32 is finite), the inverse used to unscale is `1 / scale` rounded to
//! f32, and the inf/NaN check looks at the scaled gradients as they arrive.

use thiserror::Error;

use crate::real::Real;
use crate::ConfigError;

/// `GradScaler`'s constructor arguments (PyTorch's defaults in [`Default`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalerConfig {
    pub init_scale: f64,
    pub growth_factor: f64,
    pub backoff_factor: f64,
    pub growth_interval: u32,
}

impl Default for ScalerConfig {
    fn default() -> Self {
        Self {
            init_scale: 65536.0,
            growth_factor: 2.0,
            backoff_factor: 0.5,
            growth_interval: 2000,
        }
    }
}

/// A call out of the documented order, with PyTorch's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ScalerError {
    #[error("unscale_() has already been called on this optimizer since the last update()")]
    AlreadyUnscaled,
    #[error("no inf checks were recorded prior to update(): unscale the gradients first")]
    NothingUnscaled,
}

/// What unscaling found, and so what the step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unscaled {
    /// Some scaled gradient entry was inf or NaN: the optimizer step is skipped.
    pub found_inf: bool,
}

/// What [`LossScaler::update`] did to the scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleChange {
    /// An inf/NaN this step: the scale was multiplied by the backoff factor.
    BackedOff,
    /// `growth_interval` finite steps in a row: the scale was multiplied by the growth factor.
    Grew,
    Kept,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LossScaler {
    config: ScalerConfig,
    scale: f32,
    /// Consecutive finite steps since the scale last changed.
    growth_tracker: u32,
    /// This step's unscale result, between `unscale` and `update`.
    unscaled: Option<Unscaled>,
}

impl LossScaler {
    /// A scaler at `config.init_scale`, after PyTorch's own checks (a growth factor above one,
    /// a backoff factor below one) and the Lab's: a positive finite f32 scale, a backoff above
    /// zero, and an interval of at least one step (with 0 PyTorch never grows, which no
    /// setting should mean).
    pub fn new(config: ScalerConfig) -> Result<Self, ConfigError> {
        let scale = config.init_scale as f32;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(ConfigError::new(
                "init_scale",
                "must be a positive number within f32's range",
            ));
        }
        if !(config.growth_factor > 1.0 && config.growth_factor.is_finite()) {
            return Err(ConfigError::new("growth_factor", "must be greater than 1"));
        }
        if !(config.backoff_factor > 0.0 && config.backoff_factor < 1.0) {
            return Err(ConfigError::new("backoff_factor", "must be between 0 and 1"));
        }
        if config.growth_interval == 0 {
            return Err(ConfigError::new("growth_interval", "must be at least 1 step"));
        }
        Ok(Self {
            config,
            scale,
            growth_tracker: 0,
            unscaled: None,
        })
    }

    /// The scale that multiplies each micro-batch's loss now.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Finite steps counted towards the next growth.
    pub fn growth_tracker(&self) -> u32 {
        self.growth_tracker
    }

    /// `loss` times the scale (what backpropagates from `scaler.scale(loss)`).
    pub fn scale_value<T: Real>(&self, loss: T) -> T {
        loss * T::from_f64(f64::from(self.scale))
    }

    /// Records whether any scaled gradient is inf or NaN, and multiplies every one by the
    /// inverse of the scale (`1 / scale` in f64, rounded to f32, as `GradScaler.unscale_`
    /// computes it). Once per step: a second call is an error and changes nothing.
    pub fn unscale<T: Real>(&mut self, gradients: &mut [T]) -> Result<Unscaled, ScalerError> {
        if self.unscaled.is_some() {
            return Err(ScalerError::AlreadyUnscaled);
        }
        let inverse = (1.0 / f64::from(self.scale)) as f32;
        let inverse = T::from_f64(f64::from(inverse));
        let mut found_inf = false;
        for g in gradients.iter_mut() {
            found_inf |= !g.to_f64().is_finite();
            *g *= inverse;
        }
        let result = Unscaled { found_inf };
        self.unscaled = Some(result);
        Ok(result)
    }

    /// Whether the optimizer may step now: only after this step's unscale found no inf/NaN.
    pub fn step_allowed(&self) -> Result<bool, ScalerError> {
        self.unscaled.map(|u| !u.found_inf).ok_or(ScalerError::NothingUnscaled)
    }

    /// Changes the scale once per optimizer step, from what this step's unscale found.
    pub fn update(&mut self) -> Result<ScaleChange, ScalerError> {
        let unscaled = self.unscaled.take().ok_or(ScalerError::NothingUnscaled)?;
        if unscaled.found_inf {
            self.scale = (f64::from(self.scale) * self.config.backoff_factor) as f32;
            self.growth_tracker = 0;
            return Ok(ScaleChange::BackedOff);
        }
        let successful = self.growth_tracker + 1;
        if successful == self.config.growth_interval {
            // PyTorch grows only to a finite f32 scale.
            let grown = (f64::from(self.scale) * self.config.growth_factor) as f32;
            if grown.is_finite() {
                self.scale = grown;
            }
            self.growth_tracker = 0;
            Ok(ScaleChange::Grew)
        } else {
            self.growth_tracker = successful;
            Ok(ScaleChange::Kept)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaler(growth_interval: u32) -> LossScaler {
        match LossScaler::new(ScalerConfig {
            growth_interval,
            ..ScalerConfig::default()
        }) {
            Ok(scaler) => scaler,
            Err(e) => panic!("{e}"),
        }
    }

    /// One optimizer step with these unscaled-gradient outcomes: unscale, step decision, update.
    fn step(scaler: &mut LossScaler, gradients: &mut [f32]) -> (bool, ScaleChange) {
        let found = scaler.unscale(gradients).map(|u| u.found_inf);
        let allowed = scaler.step_allowed();
        let change = scaler.update();
        match (found, allowed, change) {
            (Ok(found), Ok(allowed), Ok(change)) => {
                assert_eq!(allowed, !found);
                (allowed, change)
            }
            other => panic!("documented order refused: {other:?}"),
        }
    }

    #[test]
    fn a_step_with_an_inf_is_skipped_and_backs_off_then_growth_comes_after_the_interval() {
        let mut s = scaler(3);
        assert_eq!(s.scale(), 65536.0);
        // An inf: skipped, halved, tracker reset.
        assert_eq!(step(&mut s, &mut [1.0, f32::INFINITY]), (false, ScaleChange::BackedOff));
        assert_eq!((s.scale(), s.growth_tracker()), (32768.0, 0));
        // A NaN counts as an inf.
        assert_eq!(step(&mut s, &mut [f32::NAN]), (false, ScaleChange::BackedOff));
        assert_eq!(s.scale(), 16384.0);
        // Two finite steps: kept, tracker counts; the third grows and resets.
        assert_eq!(step(&mut s, &mut [1.0]), (true, ScaleChange::Kept));
        assert_eq!(step(&mut s, &mut [1.0]), (true, ScaleChange::Kept));
        assert_eq!(s.growth_tracker(), 2);
        assert_eq!(step(&mut s, &mut [1.0]), (true, ScaleChange::Grew));
        assert_eq!((s.scale(), s.growth_tracker()), (32768.0, 0));
        // An inf in the middle of a run of finite steps resets the count.
        step(&mut s, &mut [1.0]);
        step(&mut s, &mut [-f32::INFINITY]);
        assert_eq!((s.scale(), s.growth_tracker()), (16384.0, 0));
    }

    #[test]
    fn unscaling_divides_by_the_scale_exactly_and_only_once_per_step() {
        let mut s = scaler(2000);
        let mut g = [s.scale_value(0.75f32), s.scale_value(-3.0f32)];
        assert_eq!(g, [49152.0, -196608.0]);
        assert_eq!(s.unscale(&mut g), Ok(Unscaled { found_inf: false }));
        assert_eq!(g, [0.75, -3.0]);
        assert_eq!(s.unscale(&mut g), Err(ScalerError::AlreadyUnscaled));
        assert_eq!(g, [0.75, -3.0], "a refused second unscale changes nothing");
        assert_eq!(s.update(), Ok(ScaleChange::Kept));
        assert_eq!(
            s.update(),
            Err(ScalerError::NothingUnscaled),
            "update needs this step's unscale"
        );
        assert_eq!(s.step_allowed(), Err(ScalerError::NothingUnscaled));
    }

    #[test]
    fn the_scale_never_grows_beyond_f32() {
        let mut s = match LossScaler::new(ScalerConfig {
            init_scale: f64::from(f32::MAX),
            growth_interval: 1,
            ..ScalerConfig::default()
        }) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(step(&mut s, &mut [0.0]), (true, ScaleChange::Grew));
        assert_eq!(s.scale(), f32::MAX, "the grown scale would be infinite in f32: kept");
    }

    #[test]
    fn an_inf_is_seen_as_it_arrives_not_after_unscaling() {
        // With a scale below 1, a finite scaled gradient may overflow once unscaled; PyTorch
        // checks the incoming value, so the step is not skipped for it.
        let mut s = match LossScaler::new(ScalerConfig {
            init_scale: 0.5,
            ..ScalerConfig::default()
        }) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        let mut g = [f32::MAX];
        assert_eq!(s.unscale(&mut g), Ok(Unscaled { found_inf: false }));
        assert_eq!(g, [f32::INFINITY]);
    }

    #[test]
    fn settings_out_of_range_are_refused_with_their_field() {
        let refused = |config: ScalerConfig| LossScaler::new(config).err().map(|e| e.field);
        let base = ScalerConfig::default();
        assert_eq!(
            refused(ScalerConfig {
                init_scale: 1e39,
                ..base
            })
            .as_deref(),
            Some("init_scale")
        );
        assert_eq!(
            refused(ScalerConfig {
                init_scale: -1.0,
                ..base
            })
            .as_deref(),
            Some("init_scale")
        );
        assert_eq!(
            refused(ScalerConfig {
                growth_factor: 1.0,
                ..base
            })
            .as_deref(),
            Some("growth_factor")
        );
        assert_eq!(
            refused(ScalerConfig {
                backoff_factor: 1.0,
                ..base
            })
            .as_deref(),
            Some("backoff_factor")
        );
        assert_eq!(
            refused(ScalerConfig {
                backoff_factor: 0.0,
                ..base
            })
            .as_deref(),
            Some("backoff_factor")
        );
        assert_eq!(
            refused(ScalerConfig {
                growth_interval: 0,
                ..base
            })
            .as_deref(),
            Some("growth_interval")
        );
        assert_eq!(refused(base), None);
    }
}
