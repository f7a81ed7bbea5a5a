//! Every WGSL kernel of the GPU engine, embedded from the `.wgsl` files beside this module.

/// A compute shader and its entry points.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    pub name: &'static str,
    pub source: &'static str,
    pub entry_points: &'static [&'static str],
}

pub const LINEAR_FORWARD: Kernel = Kernel {
    name: "linear_forward",
    source: include_str!("kernels/linear_forward.wgsl"),
    entry_points: &["main"],
};

pub const LINEAR_BACKWARD_PARAMS: Kernel = Kernel {
    name: "linear_backward_params",
    source: include_str!("kernels/linear_backward_params.wgsl"),
    entry_points: &["main"],
};

pub const LINEAR_BACKWARD_INPUT: Kernel = Kernel {
    name: "linear_backward_input",
    source: include_str!("kernels/linear_backward_input.wgsl"),
    entry_points: &["main"],
};

pub const ACTIVATION_FORWARD: Kernel = Kernel {
    name: "activation_forward",
    source: include_str!("kernels/activation_forward.wgsl"),
    entry_points: &["main"],
};

pub const ACTIVATION_BACKWARD: Kernel = Kernel {
    name: "activation_backward",
    source: include_str!("kernels/activation_backward.wgsl"),
    entry_points: &["main"],
};

pub const NORM_FORWARD: Kernel = Kernel {
    name: "norm_forward",
    source: include_str!("kernels/norm_forward.wgsl"),
    entry_points: &["main"],
};

pub const NORM_BACKWARD_INPUT: Kernel = Kernel {
    name: "norm_backward_input",
    source: include_str!("kernels/norm_backward_input.wgsl"),
    entry_points: &["main"],
};

pub const NORM_BACKWARD_PARAMS: Kernel = Kernel {
    name: "norm_backward_params",
    source: include_str!("kernels/norm_backward_params.wgsl"),
    entry_points: &["main"],
};

pub const BATCH_NORM_RUNNING: Kernel = Kernel {
    name: "batch_norm_running",
    source: include_str!("kernels/batch_norm_running.wgsl"),
    entry_points: &["main"],
};

pub const BATCH_NORM_EVAL: Kernel = Kernel {
    name: "batch_norm_eval",
    source: include_str!("kernels/batch_norm_eval.wgsl"),
    entry_points: &["main"],
};

pub const SOFTMAX_FORWARD: Kernel = Kernel {
    name: "softmax_forward",
    source: include_str!("kernels/softmax_forward.wgsl"),
    entry_points: &["main"],
};

pub const SOFTMAX_BACKWARD: Kernel = Kernel {
    name: "softmax_backward",
    source: include_str!("kernels/softmax_backward.wgsl"),
    entry_points: &["main"],
};

pub const REDUCE: Kernel = Kernel {
    name: "reduce",
    source: include_str!("kernels/reduce.wgsl"),
    entry_points: &["main"],
};

pub const CLIP: Kernel = Kernel {
    name: "clip",
    source: include_str!("kernels/clip.wgsl"),
    entry_points: &["main"],
};

pub const OPTIMIZER: Kernel = Kernel {
    name: "optimizer",
    source: include_str!("kernels/optimizer.wgsl"),
    entry_points: &["main"],
};

/// All kernels, for the validation test and for building pipelines.
pub const ALL: &[Kernel] = &[
    LINEAR_FORWARD,
    LINEAR_BACKWARD_PARAMS,
    LINEAR_BACKWARD_INPUT,
    ACTIVATION_FORWARD,
    ACTIVATION_BACKWARD,
    NORM_FORWARD,
    NORM_BACKWARD_INPUT,
    NORM_BACKWARD_PARAMS,
    BATCH_NORM_RUNNING,
    BATCH_NORM_EVAL,
    SOFTMAX_FORWARD,
    SOFTMAX_BACKWARD,
    REDUCE,
    CLIP,
    OPTIMIZER,
];
