//! The planner page's form as plain state: what each field holds as typed, the presets it
//! offers, and the request it makes for `sim::planner` (every field checked, a decimal comma
//! accepted), so the page is a thin view over it.

use crate::sim::planner::{model, LoraTargets, Method, Optimizer, PlanError, PlanRequest, Precision, Sharding};

/// Device memories a learner picks from (GiB), with what has that much.
pub const MEMORY_PRESETS: [(u64, &str); 7] = [
    (8, "RTX 4060 / 3070"),
    (12, "RTX 3060 / 4070"),
    (16, "RTX 4080 / T4"),
    (24, "RTX 3090 / 4090 / A10"),
    (48, "RTX 6000 Ada / A40 / L40S"),
    (80, "A100 80GB / H100"),
    (141, "H200"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodChoice {
    Full,
    Lora,
    Qlora,
}

/// The form, as the learner typed it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanForm {
    pub model: String,
    pub method: MethodChoice,
    pub lora_rank: String,
    pub all_linear: bool,
    pub precision: Precision,
    pub optimizer: Optimizer,
    pub checkpointing: bool,
    pub sequence_length: String,
    pub memory_gib: String,
    pub devices: String,
    pub sharding: Sharding,
    pub target_batch: String,
}

impl Default for PlanForm {
    /// The question the Lab's learners bring: an 8B model with LoRA on a 24 GB card.
    fn default() -> Self {
        Self {
            model: "llama-3.1-8b".into(),
            method: MethodChoice::Lora,
            lora_rank: "16".into(),
            all_linear: false,
            precision: Precision::Bf16Mixed,
            optimizer: Optimizer::AdamW,
            checkpointing: true,
            sequence_length: "2048".into(),
            memory_gib: "24".into(),
            devices: "1".into(),
            sharding: Sharding::None,
            target_batch: "256".into(),
        }
    }
}

fn whole(field: &'static str, text: &str) -> Result<u64, PlanError> {
    text.trim().parse::<u64>().map_err(|_| PlanError {
        field,
        problem: format!("\"{}\" is not a whole number", text.trim()),
    })
}

impl PlanForm {
    /// The planner's request, or the first field that is wrong.
    pub fn request(&self) -> Result<PlanRequest, PlanError> {
        let architecture = model(&self.model)?.architecture;
        let memory: f64 = self
            .memory_gib
            .trim()
            .replace(',', ".")
            .parse()
            .map_err(|_| PlanError {
                field: "memory",
                problem: format!("\"{}\" is not a number of GiB", self.memory_gib.trim()),
            })?;
        if !(memory.is_finite() && memory > 0.0 && memory <= 1e6) {
            return Err(PlanError {
                field: "memory",
                problem: "the device memory must be more than 0 GiB".into(),
            });
        }
        let targets = if self.all_linear {
            LoraTargets::AllLinear
        } else {
            LoraTargets::Attention
        };
        let method = match self.method {
            MethodChoice::Full => Method::Full,
            MethodChoice::Lora => Method::Lora {
                rank: whole("lora_rank", &self.lora_rank)?,
                targets,
            },
            MethodChoice::Qlora => Method::Qlora {
                rank: whole("lora_rank", &self.lora_rank)?,
                targets,
            },
        };
        let request = PlanRequest {
            architecture,
            method,
            precision: self.precision,
            optimizer: self.optimizer,
            checkpointing: self.checkpointing,
            sequence_length: whole("seq_len", &self.sequence_length)?,
            budget_bytes: (memory * (1u64 << 30) as f64) as u64,
            devices: whole("devices", &self.devices)?,
            sharding: self.sharding,
            target_batch: whole("target_batch", &self.target_batch)?,
        };
        request.check()?;
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::planner::Outcome;

    #[test]
    fn the_default_form_plans_an_8b_lora_on_a_24_gib_card() {
        let request = PlanForm::default().request().unwrap();
        let Outcome::Fits(plan) = request.plan().unwrap() else {
            panic!("fits")
        };
        assert_eq!(plan.effective_batch, 256);
        assert!(plan.memory_bytes.total <= plan.memory_bytes.budget);
    }

    #[test]
    fn each_bad_field_is_named() {
        let with = |change: &dyn Fn(&mut PlanForm)| {
            let mut form = PlanForm::default();
            change(&mut form);
            form.request().unwrap_err().field
        };
        assert_eq!(with(&|f| f.memory_gib = "0".into()), "memory");
        assert_eq!(with(&|f| f.memory_gib = "lots".into()), "memory");
        assert_eq!(with(&|f| f.memory_gib = "-8".into()), "memory");
        assert_eq!(with(&|f| f.sequence_length = "-1".into()), "seq_len");
        assert_eq!(with(&|f| f.sequence_length = "0".into()), "seq_len");
        assert_eq!(with(&|f| f.devices = "2.5".into()), "devices");
        assert_eq!(with(&|f| f.target_batch = "".into()), "target_batch");
        assert_eq!(with(&|f| f.lora_rank = "0".into()), "lora_rank");
        assert_eq!(with(&|f| f.model = "nope".into()), "model");
        assert_eq!(with(&|f| f.sharding = Sharding::Zero3), "sharding", "one device");
        let comma = PlanForm {
            memory_gib: "23,5".into(),
            ..PlanForm::default()
        };
        assert_eq!(
            comma.request().unwrap().budget_bytes,
            (23.5 * (1u64 << 30) as f64) as u64
        );
    }
}
