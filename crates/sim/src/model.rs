//! The network: a typed spec, the flat parameter layout derived from it, and seeded initialization.
//!
//! Layer order for every hidden layer: Linear -> (optional norm) -> activation; then a Linear
//! output layer and softmax cross-entropy. Weights are stored `[out, in]` row-major, as PyTorch does.

use serde::{Deserialize, Serialize};

use super::rng::SeededRng;
use super::ConfigError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Activation {
    #[default]
    Relu,
    Tanh,
    /// The tanh approximation of GELU (PyTorch's `approximate="tanh"`), which WGSL can express exactly.
    Gelu,
}

impl Activation {
    pub const ALL: [Activation; 3] = [Activation::Relu, Activation::Tanh, Activation::Gelu];
}

/// Normalization after each hidden linear layer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Norm {
    #[default]
    None,
    /// Statistics over the (micro-)batch, per feature; running statistics for evaluation.
    BatchNorm {
        #[serde(default = "default_momentum")]
        momentum: f64,
        #[serde(default = "default_eps")]
        eps: f64,
    },
    /// Statistics over the features of each item.
    LayerNorm {
        #[serde(default = "default_eps")]
        eps: f64,
    },
    /// Statistics over each group of features of each item.
    GroupNorm {
        groups: usize,
        #[serde(default = "default_eps")]
        eps: f64,
    },
}

fn default_momentum() -> f64 {
    0.1
}
fn default_eps() -> f64 {
    1e-5
}

impl Norm {
    pub fn batch_norm() -> Self {
        Norm::BatchNorm {
            momentum: default_momentum(),
            eps: default_eps(),
        }
    }
    pub fn layer_norm() -> Self {
        Norm::LayerNorm { eps: default_eps() }
    }
    pub fn group_norm(groups: usize) -> Self {
        Norm::GroupNorm {
            groups,
            eps: default_eps(),
        }
    }
    pub fn has_parameters(&self) -> bool {
        !matches!(self, Norm::None)
    }
    /// Whether the statistics mix items, which is what breaks the equivalence of accumulation.
    pub fn mixes_items(&self) -> bool {
        matches!(self, Norm::BatchNorm { .. })
    }
    pub fn eps(&self) -> f64 {
        match *self {
            Norm::None => 0.0,
            Norm::BatchNorm { eps, .. } | Norm::LayerNorm { eps } | Norm::GroupNorm { eps, .. } => eps,
        }
    }
    pub fn label(&self) -> &'static str {
        match self {
            Norm::None => "no norm",
            Norm::BatchNorm { .. } => "BatchNorm",
            Norm::LayerNorm { .. } => "LayerNorm",
            Norm::GroupNorm { .. } => "GroupNorm",
        }
    }
}

pub const MAX_WIDTH: usize = 1024;
pub const MAX_HIDDEN_LAYERS: usize = 8;

/// The architecture a run trains; input and output sizes come from the data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSpec {
    pub hidden: Vec<usize>,
    pub activation: Activation,
    pub norm: Norm,
}

impl Default for ModelSpec {
    fn default() -> Self {
        Self {
            hidden: vec![64, 64],
            activation: Activation::Relu,
            norm: Norm::None,
        }
    }
}

impl ModelSpec {
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        if self.hidden.is_empty() || self.hidden.len() > MAX_HIDDEN_LAYERS {
            return Err(ConfigError::new(
                format!("{field}.hidden"),
                format!(
                    "needs 1 to {MAX_HIDDEN_LAYERS} hidden layers, got {}",
                    self.hidden.len()
                ),
            ));
        }
        for (i, &width) in self.hidden.iter().enumerate() {
            if width == 0 || width > MAX_WIDTH {
                return Err(ConfigError::new(
                    format!("{field}.hidden[{i}]"),
                    format!("width must be between 1 and {MAX_WIDTH}, got {width}"),
                ));
            }
            if let Norm::GroupNorm { groups, .. } = self.norm {
                if groups == 0 || width % groups != 0 {
                    return Err(ConfigError::new(
                        format!("{field}.norm.groups"),
                        format!("must be at least 1 and divide every hidden width; {groups} does not divide {width}"),
                    ));
                }
            }
        }
        let eps = self.norm.eps();
        if self.norm.has_parameters() && !(eps > 0.0 && eps <= 1.0) {
            return Err(ConfigError::new(
                format!("{field}.norm.eps"),
                format!("must be in (0, 1], got {eps}"),
            ));
        }
        if let Norm::BatchNorm { momentum, .. } = self.norm {
            if !(0.0..=1.0).contains(&momentum) {
                return Err(ConfigError::new(
                    format!("{field}.norm.momentum"),
                    format!("must be in [0, 1], got {momentum}"),
                ));
            }
        }
        Ok(())
    }
}

/// What a parameter tensor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorRole {
    Weight,
    Bias,
    NormScale,
    NormShift,
}

/// One tensor inside the flat parameter vector.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorInfo {
    pub name: String,
    pub role: TensorRole,
    /// `[out, in]` for weights (row-major), `[features]` otherwise.
    pub shape: Vec<usize>,
    pub offset: usize,
    pub len: usize,
}

/// Offsets of one hidden layer's tensors in the flat parameter vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HiddenLayer {
    pub fan_in: usize,
    pub width: usize,
    pub weight: usize,
    pub bias: usize,
    /// Offsets of gamma and beta when the layer has a norm.
    pub norm_scale: Option<usize>,
    pub norm_shift: Option<usize>,
    /// Offset of this layer's running mean and variance in the buffer vector (BatchNorm only).
    pub running_stats: Option<usize>,
}

/// The flat layout of parameters (trained) and buffers (BatchNorm running statistics).
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub spec: ModelSpec,
    pub input_dim: usize,
    pub classes: usize,
    pub hidden: Vec<HiddenLayer>,
    pub output_weight: usize,
    pub output_bias: usize,
    pub output_fan_in: usize,
    pub tensors: Vec<TensorInfo>,
    pub parameter_count: usize,
    pub buffer_count: usize,
}

impl Layout {
    pub fn new(spec: &ModelSpec, input_dim: usize, classes: usize) -> Self {
        let mut tensors = Vec::new();
        let mut offset = 0;
        let mut push = |name: String, role: TensorRole, shape: Vec<usize>| {
            let len = shape.iter().product();
            tensors.push(TensorInfo {
                name,
                role,
                shape,
                offset,
                len,
            });
            let start = offset;
            offset += len;
            start
        };
        let mut hidden = Vec::new();
        let mut buffer_count = 0;
        let mut fan_in = input_dim;
        for (l, &width) in spec.hidden.iter().enumerate() {
            let weight = push(format!("hidden{l}.weight"), TensorRole::Weight, vec![width, fan_in]);
            let bias = push(format!("hidden{l}.bias"), TensorRole::Bias, vec![width]);
            let (norm_scale, norm_shift) = if spec.norm.has_parameters() {
                (
                    Some(push(
                        format!("hidden{l}.norm.weight"),
                        TensorRole::NormScale,
                        vec![width],
                    )),
                    Some(push(format!("hidden{l}.norm.bias"), TensorRole::NormShift, vec![width])),
                )
            } else {
                (None, None)
            };
            let running_stats = if spec.norm.mixes_items() {
                let start = buffer_count;
                buffer_count += 2 * width;
                Some(start)
            } else {
                None
            };
            hidden.push(HiddenLayer {
                fan_in,
                width,
                weight,
                bias,
                norm_scale,
                norm_shift,
                running_stats,
            });
            fan_in = width;
        }
        let output_weight = push("output.weight".into(), TensorRole::Weight, vec![classes, fan_in]);
        let output_bias = push("output.bias".into(), TensorRole::Bias, vec![classes]);
        Self {
            spec: spec.clone(),
            input_dim,
            classes,
            hidden,
            output_weight,
            output_bias,
            output_fan_in: fan_in,
            tensors,
            parameter_count: offset,
            buffer_count,
        }
    }

    /// Seeded initialization: He-normal before ReLU/GELU, Xavier-normal before tanh and for the
    /// output layer; zero biases; norm scale 1 and shift 0; running mean 0 and variance 1.
    ///
    /// Each linear layer draws from its own sub-stream, so runs that differ only in their norm
    /// start from the same linear weights.
    pub fn initialize(&self, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut params = vec![0.0; self.parameter_count];
        for (l, layer) in self.hidden.iter().enumerate() {
            let std = match self.spec.activation {
                Activation::Relu | Activation::Gelu => libm::sqrt(2.0 / layer.fan_in as f64),
                Activation::Tanh => libm::sqrt(2.0 / (layer.fan_in + layer.width) as f64),
            };
            let mut rng = SeededRng::derive(seed, 100 + l as u64);
            for w in &mut params[layer.weight..layer.weight + layer.width * layer.fan_in] {
                *w = rng.normal() * std;
            }
            if let Some(scale) = layer.norm_scale {
                params[scale..scale + layer.width].fill(1.0);
            }
        }
        let std = libm::sqrt(2.0 / (self.output_fan_in + self.classes) as f64);
        let mut rng = SeededRng::derive(seed, 99);
        for w in &mut params[self.output_weight..self.output_weight + self.classes * self.output_fan_in] {
            *w = rng.normal() * std;
        }
        let mut buffers = vec![0.0; self.buffer_count];
        for layer in &self.hidden {
            if let Some(stats) = layer.running_stats {
                buffers[stats + layer.width..stats + 2 * layer.width].fill(1.0);
            }
        }
        (params, buffers)
    }

    /// The widest layer (items x features) that the forward pass must keep, for sizing scratch.
    pub fn widest(&self) -> usize {
        self.spec
            .hidden
            .iter()
            .copied()
            .chain([self.input_dim, self.classes])
            .max()
            .unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_layout_counts_parameters() {
        let layout = Layout::new(&ModelSpec::default(), 2, 3);
        // 2-64-64-3: (2*64+64) + (64*64+64) + (64*3+3)
        assert_eq!(layout.parameter_count, 192 + 4160 + 195);
        assert_eq!(layout.buffer_count, 0);
        assert_eq!(layout.tensors.len(), 6);
        let last = layout.tensors.last().unwrap();
        assert_eq!(last.offset + last.len, layout.parameter_count);
    }

    #[test]
    fn batch_norm_adds_scale_shift_and_running_stats() {
        let spec = ModelSpec {
            norm: Norm::batch_norm(),
            ..ModelSpec::default()
        };
        let layout = Layout::new(&spec, 2, 3);
        assert_eq!(layout.parameter_count, 4547 + 4 * 64);
        assert_eq!(layout.buffer_count, 4 * 64);
        let (_, buffers) = layout.initialize(1);
        assert_eq!(&buffers[..64], &[0.0; 64][..]);
        assert_eq!(&buffers[64..128], &[1.0; 64][..]);
    }

    #[test]
    fn runs_differing_in_norm_share_linear_weights() {
        let plain = Layout::new(&ModelSpec::default(), 2, 3);
        let layer_norm = Layout::new(
            &ModelSpec {
                norm: Norm::layer_norm(),
                ..ModelSpec::default()
            },
            2,
            3,
        );
        let (a, _) = plain.initialize(9);
        let (b, _) = layer_norm.initialize(9);
        let (pa, pb) = (plain.hidden[1], layer_norm.hidden[1]);
        assert_eq!(a[pa.weight..pa.weight + 64 * 64], b[pb.weight..pb.weight + 64 * 64]);
        let std = a[pa.weight..pa.weight + 4096].iter().map(|w| w * w).sum::<f64>() / 4096.0;
        assert!((std - 2.0 / 64.0).abs() < 0.005, "He variance {std}");
    }

    #[test]
    fn group_norm_groups_must_divide_widths() {
        let spec = ModelSpec {
            hidden: vec![64, 30],
            norm: Norm::group_norm(4),
            ..ModelSpec::default()
        };
        let err = spec.validate("runs[0].model").unwrap_err();
        assert_eq!(err.field, "runs[0].model.norm.groups");
    }
}
