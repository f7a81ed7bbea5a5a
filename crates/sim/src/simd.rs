//! Which instruction set the CPU engine's blocked kernels (the linear layers and attention) run
//! with: each kernel is written once, generic over its register-block width, and compiled again
//! inside `#[target_feature]` functions for AVX2 and AVX-512 where the CPU has them (each
//! kernel's `wide` module, the workspace's only `unsafe` code). A vector multiply or add rounds
//! each lane exactly as the scalar operation does, and fused multiply-add is never enabled (it
//! would round once where the textbook loop rounds twice), so every build gives the same bits;
//! each kernel's tests compare every build this CPU runs.

/// An instruction set a kernel can be built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// The build's baseline: SSE2 natively, simd128 in wasm.
    Portable,
    /// 256-bit registers.
    Avx2,
    /// 512-bit registers (AVX-512F).
    Avx512,
}

impl Isa {
    /// Whether this CPU runs code built for `self` (detected once, then cached by std).
    pub fn runs_here(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => false,
        }
    }

    /// Lanes of `T` in two registers, at least eight (two SSE2 registers hold only four f64):
    /// the width of the blocks that keep enough independent sums in flight.
    pub const fn two_registers_of<T>(self) -> usize {
        let bytes = match self {
            Isa::Portable => 16,
            Isa::Avx2 => 32,
            Isa::Avx512 => 64,
        };
        let lanes = 2 * bytes / size_of::<T>();
        if lanes > 8 {
            lanes
        } else {
            8
        }
    }
}

/// The widest instruction set this CPU runs.
pub fn best() -> Isa {
    [Isa::Avx512, Isa::Avx2]
        .into_iter()
        .find(|isa| isa.runs_here())
        .unwrap_or(Isa::Portable)
}

/// Every instruction set this CPU runs, narrowest first: what the kernels' tests compare.
pub fn available() -> Vec<Isa> {
    [Isa::Portable, Isa::Avx2, Isa::Avx512]
        .into_iter()
        .filter(|isa| isa.runs_here())
        .collect()
}
