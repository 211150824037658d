//! Python objects ⇄ JSON values: how LMC chunks, messages and settings cross the boundary.
//!
//! Dicts, lists, strings, numbers, booleans and `None` map one to one; tuples are read as
//! lists. Anything else (bytes, sets, objects) is refused with a message that names the
//! offending value's type and where it sat.

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// How deep a Python value may nest before it is refused (a cycle would otherwise recurse
/// forever).
const MAX_DEPTH: usize = 64;

/// The order of LMC keys in a chunk or message, as serialised by oi and the original.
const LMC_KEY_ORDER: [&str; 8] = [
    "role",
    "type",
    "format",
    "content",
    "recipient",
    "start",
    "end",
    "id",
];

/// The JSON value of a Python object; `at` names it in errors (e.g. `messages[2]`).
pub fn to_json(value: &Bound<'_, PyAny>, at: &str) -> PyResult<Value> {
    to_json_at(value, at, 0)
}

fn to_json_at(value: &Bound<'_, PyAny>, at: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyTypeError::new_err(format!(
            "{at} nests deeper than {MAX_DEPTH} levels (is it a list or dict that contains itself?)"
        )));
    }
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(n) = value.extract::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = value.extract::<u64>() {
            return Ok(Value::from(n));
        }
        return Err(PyTypeError::new_err(format!(
            "{at} is an integer too large for JSON: use a smaller number"
        )));
    }
    if value.is_instance_of::<PyFloat>() {
        let n: f64 = value.extract()?;
        return Number::from_f64(n).map(Value::Number).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "{at} is {n}, which JSON cannot hold: use a finite number"
            ))
        });
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Value::String(text.extract::<String>()?));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = Map::new();
        for (key, item) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "{at} has a key of type {} ({}): keys must be strings",
                    type_name(&key),
                    short_repr(&key)
                )));
            };
            let key = key.extract::<String>()?;
            let inner = format!("{at}[{key:?}]");
            map.insert(key, to_json_at(&item, &inner, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in value.try_iter()?.enumerate() {
            items.push(to_json_at(&item?, &format!("{at}[{i}]"), depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "{at} is a {} ({}): only dicts, lists, strings, numbers, booleans and None can be sent",
        type_name(value),
        short_repr(value)
    )))
}

/// The Python object of a JSON value.
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(flag) => flag.into_bound_py_any(py),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_bound_py_any(py)
            } else if let Some(u) = n.as_u64() {
                u.into_bound_py_any(py)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)
            }
        }
        Value::String(text) => text.into_bound_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Value::Object(map) => {
            // LMC keys in the order the wire (and the original) puts them; others after.
            let dict = PyDict::new(py);
            let known = LMC_KEY_ORDER.iter().filter_map(|k| map.get_key_value(*k));
            let others = map
                .iter()
                .filter(|(key, _)| !LMC_KEY_ORDER.contains(&key.as_str()));
            for (key, item) in known.chain(others) {
                dict.set_item(key, to_python(py, item)?)?;
            }
            Ok(dict.into_any())
        }
    }
}

/// The Python type name of `value` (`int`, `bytes`, …).
pub fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_owned())
}

/// `repr(value)`, cut to 60 characters.
pub fn short_repr(value: &Bound<'_, PyAny>) -> String {
    let text = value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".to_owned());
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// One output of `computer.run()` as the original returns it: `{"type", "format", "content"}`
/// (and `recipient` when set).
pub(crate) fn output_object<'py>(
    py: Python<'py>,
    output: oi_core::Output,
) -> PyResult<Bound<'py, PyAny>> {
    let mut value = serde_json::to_value(output.into_chunk()).unwrap_or(Value::Null);
    if let Some(object) = value.as_object_mut() {
        object.remove("role");
    }
    to_python(py, &value)
}
