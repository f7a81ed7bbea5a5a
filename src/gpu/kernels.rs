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

/// All kernels, for the validation test and for building pipelines.
pub const ALL: &[Kernel] = &[
    LINEAR_FORWARD,
    LINEAR_BACKWARD_PARAMS,
    LINEAR_BACKWARD_INPUT,
    ACTIVATION_FORWARD,
    ACTIVATION_BACKWARD,
];
