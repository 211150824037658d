//! Token counting and prices for `interpreter.terminal_interface.utils.count_tokens`: oi's own
//! tokenizer ([`oi_llm::trim::Counter`]) and model table ([`oi_llm::model_table::price`]).

use oi_llm::model_table::price;
use oi_llm::trim::Counter;
use pyo3::prelude::*;

/// The tokenizer for `model`: oi's for OpenAI-family names, else GPT-4's (as the original,
/// which falls back to the `gpt-4` tokenizer for models it has none for).
fn counter(model: &str) -> Counter {
    match Counter::for_model(model) {
        Counter::Estimate => Counter::for_model("gpt-4"),
        known => known,
    }
}

/// Tokens in `text` for `model` (default `gpt-4`).
#[pyfunction]
#[pyo3(signature = (text = "", model = None))]
pub fn count_tokens(py: Python<'_>, text: &str, model: Option<&str>) -> usize {
    let model = model.unwrap_or("gpt-4");
    py.detach(|| counter(model).text(text))
}

/// The prompt price of `tokens` tokens of `model` in USD, rounded to 6 places; `None` when oi
/// does not know the model's price.
#[pyfunction]
#[pyo3(signature = (tokens = 0, model = None))]
pub fn token_cost(tokens: u64, model: Option<&str>) -> Option<f64> {
    let price = price(model.unwrap_or("gpt-4"))?;
    Some((price.cost(tokens, 0) * 1e6).round() / 1e6)
}
