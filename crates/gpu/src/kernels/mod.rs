//! Every WGSL kernel of the GPU engine, embedded from the `.wgsl` files beside this module, each
//! with the typed parameter struct of its uniform.
//!
//! A kernel is a [`Kernel<P>`]: its dispatches take a `P` and nothing else. One source of truth:
//! the WGSL declaration of `P`, its binding (`args` at `@binding(0)`) and the mode codes
//! ([`MODE_CONSTANTS`], from the enums here) are generated and prepended to the kernel's source
//! by [`KernelInfo::wgsl`]; the `.wgsl` files use them and declare neither. The naga test
//! (tests/shaders.rs) checks `P`'s size, field names, types and offsets against naga's layout of
//! the generated struct, and that no `.wgsl` writes a uniform or a mode code by hand.
//!
//! The kernels live in family modules (linear, first_and_output, norm, output, reduce,
//! optimizer, and the tiny GPT's residual and attention), each with its
//! parameter structs, modes, kernel constants, shape checks and `GpuOps` dispatch methods.
//!
//! Adding a kernel touches its family module and its `.wgsl` file (storage bindings from 1, no
//! uniform): in the module, its parameter struct, its constant (its [`KernelId`] in the family,
//! name, source, workgroup size and storage accesses, which the naga test checks against the
//! shader), its entry in the family's `KERNELS` and its `GpuOps` method (the naga test fails
//! until every `.wgsl` file is some kernel's). A new family is a module listed in [`FAMILIES`].

use std::marker::PhantomData;

use gradlab_sim::model::Activation;

/// A kernel's uniform parameters: plain old data whose layout the naga test compares with WGSL.
pub trait KernelParams: bytemuck::Pod + std::fmt::Debug {
    /// The struct's name, which its generated WGSL declaration takes.
    const NAME: &'static str;
    /// (field name, byte offset, Rust type name) in declaration order.
    const FIELDS: &'static [(&'static str, usize, &'static str)];
}

/// Declares a `#[repr(C)]` parameter struct and records its fields for the layout test.
macro_rules! kernel_params {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$field_meta:meta])* pub $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty),*
        }

        impl KernelParams for $name {
            const NAME: &'static str = stringify!($name);
            const FIELDS: &'static [(&'static str, usize, &'static str)] =
                &[$((stringify!($field), std::mem::offset_of!($name, $field), stringify!($ty))),*];
        }
    };
}

/// What the pipeline builder and the validation test need of a kernel, whatever its parameters.
#[derive(Debug, Clone, Copy)]
pub struct KernelInfo {
    pub id: KernelId,
    pub name: &'static str,
    pub source: &'static str,
    pub entry_point: &'static str,
    pub params_name: &'static str,
    pub params_size: usize,
    pub params_fields: &'static [(&'static str, usize, &'static str)],
    /// Invocations per workgroup (`@workgroup_size`).
    pub workgroup_size: u32,
    /// Its storage buffers, bindings 1, 2, ..., in order.
    pub storage: &'static [Access],
}

/// The mode codes the kernels compare with (and a token row's size and the places of its fields), as WGSL
/// constants: generated into every kernel from the Rust enums, so that no `.wgsl` writes a code
/// as a literal (tests/shaders.rs checks).
pub const MODE_CONSTANTS: [(&str, u32); 17] = [
    ("ACTIVATION_IDENTITY", ActivationCode::Identity as u32),
    ("ACTIVATION_RELU", ActivationCode::Relu as u32),
    ("ACTIVATION_TANH", ActivationCode::Tanh as u32),
    ("ACTIVATION_GELU", ActivationCode::Gelu as u32),
    ("REDUCE_SUM_OF_SQUARES", ReduceMode::SumOfSquares as u32),
    ("REDUCE_COMPARISON", ReduceMode::Comparison as u32),
    ("REDUCE_PAIR_SUMS", ReduceMode::PairSums as u32),
    ("REDUCE_IN_ORDER_SUM", ReduceMode::InOrderSum as u32),
    ("OPTIMIZER_SGD", OptimizerKind::Sgd as u32),
    ("OPTIMIZER_MOMENTUM", OptimizerKind::Momentum as u32),
    ("OPTIMIZER_ADAM", OptimizerKind::Adam as u32),
    ("OPTIMIZER_ADAMW", OptimizerKind::AdamW as u32),
    ("ROW_TOKEN", TokenRowField::Token as u32),
    ("ROW_POSITION", TokenRowField::Position as u32),
    ("ROW_LENGTH", TokenRowField::Length as u32),
    ("ROW_PROBS", TokenRowField::Probs as u32),
    ("ROW_FIELDS", TOKEN_ROW_FIELDS as u32),
];

impl KernelInfo {
    /// The kernel's WGSL as the device compiles it: the mode constants, the uniform struct and
    /// its binding (`args`, at `@binding(0)`), generated from the Rust definitions, then the
    /// kernel's own source, which declares neither.
    pub fn wgsl(&self) -> String {
        let mut out = String::from("// Generated from gpu/kernels/mod.rs.\n");
        for (name, code) in MODE_CONSTANTS {
            out.push_str(&format!("const {name}: u32 = {code}u;\n"));
        }
        out.push_str(&format!("struct {} {{\n", self.params_name));
        for (field, _, ty) in self.params_fields {
            out.push_str(&format!("    {field}: {ty},\n"));
        }
        out.push_str(&format!(
            "}}\n@group(0) @binding(0) var<uniform> args: {};\n",
            self.params_name
        ));
        out.push_str(self.source);
        out
    }
}

/// Which kernel: its family's place in [`FAMILIES`] and its own place in that family's
/// `KERNELS` (tests/shaders.rs checks both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelId {
    pub family: usize,
    pub index: usize,
}

impl KernelId {
    pub const fn new(family: usize, index: usize) -> Self {
        Self { family, index }
    }
}

/// A compute shader whose dispatches take parameters of type `P` and `N` storage buffers (at
/// bindings 1 to N): a typed handle, found by its [`KernelId`], never by its name.
#[derive(Debug)]
pub struct Kernel<P, const N: usize> {
    pub info: KernelInfo,
    params: PhantomData<fn(P)>,
}

/// Dispatch constants live in 256-byte uniform slots (WebGPU's minimum offset alignment).
pub const MAX_PARAMS_BYTES: usize = 256;

impl<P: KernelParams, const N: usize> Kernel<P, N> {
    /// Kernel `id`, running `workgroup_size` invocations per workgroup, binding its storage
    /// buffers as `storage` says (both checked against the WGSL by tests/shaders.rs).
    pub const fn new(
        id: KernelId,
        name: &'static str,
        source: &'static str,
        workgroup_size: u32,
        storage: &'static [Access; N],
    ) -> Self {
        assert!(size_of::<P>() <= MAX_PARAMS_BYTES);
        Self {
            info: KernelInfo {
                id,
                name,
                source,
                entry_point: "main",
                params_name: P::NAME,
                params_size: size_of::<P>(),
                params_fields: P::FIELDS,
                workgroup_size,
                storage,
            },
            params: PhantomData,
        }
    }
}

/// How a kernel binds a storage buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    ReadWrite,
}

use Access::{Read as R, ReadWrite as RW};

/// Activation codes of the WGSL kernels (kernels/shared/activation.wgsl).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ActivationCode {
    Identity = 0,
    Relu = 1,
    Tanh = 2,
    Gelu = 3,
}

impl ActivationCode {
    /// The activation a kernel parameter names, if any.
    pub fn from_code(code: u32) -> Option<Self> {
        [Self::Identity, Self::Relu, Self::Tanh, Self::Gelu]
            .into_iter()
            .find(|kind| *kind as u32 == code)
    }

    /// Whether f'(u) follows from f(u) alone, bit for bit as from u (identity, ReLU: a > 0
    /// exactly where u > 0; tanh: 1 - a^2 is what the derivative computes from tanh(u)), so that
    /// a kernel holding only the activations can apply the derivative. GELU's cannot.
    pub fn derivative_from_output(self) -> bool {
        !matches!(self, Self::Gelu)
    }
}

impl From<Activation> for ActivationCode {
    fn from(kind: Activation) -> Self {
        match kind {
            Activation::Relu => Self::Relu,
            Activation::Tanh => Self::Tanh,
            Activation::Gelu => Self::Gelu,
        }
    }
}

/// Prepends the shared activation functions to a kernel's source.
macro_rules! with_activations {
    ($file:literal) => {
        concat!(include_str!("shared/activation.wgsl"), include_str!($file))
    };
}

pub mod attention;
pub mod first_and_output;
pub mod linear;
pub mod norm;
pub mod optimizer;
pub mod output;
pub mod reduce;
pub mod residual;

pub use attention::*;
pub use first_and_output::*;
pub use linear::*;
pub use norm::*;
pub use optimizer::*;
pub use output::*;
pub use reduce::*;
pub use residual::*;

/// The kernel families, each at its `FAMILY` (a kernel's [`KernelId::family`]).
#[allow(
    unused_qualifications,
    reason = "every family's list is named by its module; the glob re-exports above let one of them resolve unqualified"
)]
pub const FAMILIES: [&[KernelInfo]; 8] = [
    linear::KERNELS,
    first_and_output::KERNELS,
    norm::KERNELS,
    output::KERNELS,
    reduce::KERNELS,
    optimizer::KERNELS,
    residual::KERNELS,
    attention::KERNELS,
];

/// Every kernel, family by family: for the validation test and for building pipelines.
pub fn all() -> impl Iterator<Item = &'static KernelInfo> {
    FAMILIES.iter().flat_map(|family| family.iter())
}
