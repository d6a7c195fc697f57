//! Arrow arrays in and out through the Arrow C data interface (PyCapsules),
//! so pyarrow, Polars, pandas and DuckDB objects are read without copying
//! and without importing pyarrow here.
//!
//! In: `__arrow_c_array__()` (one array) or `__arrow_c_stream__()` (chunks;
//! a stream of one-column structs, as DuckDB relations give, is read as that
//! column). Values may be strings or bytes in any Arrow layout, plain or
//! dictionary-encoded (see [`lines`]; `null` arrays read as all missing),
//! and are never decoded: bytes that are not UTF-8 are an invalid URL. Out: a schema and array capsule pair per chunk,
//! turned back into the caller's kind of object by `urikey/_arrow.py`.

use std::ffi::CString;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{ArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::types::{
    ArrowDictionaryKeyType, ByteArrayType, ByteViewType, Int16Type, Int32Type, Int64Type, Int8Type,
    UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, BooleanArray, DictionaryArray,
    FixedSizeBinaryArray, GenericByteArray, GenericByteViewArray, GenericStringArray,
    OffsetSizeTrait, StructArray,
};
use arrow_buffer::{
    ArrowNativeType, BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::{ArrowError, DataType};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

use crate::keys::{KeyRef, Keys, Line};

fn arrow_err(e: ArrowError) -> PyErr {
    PyValueError::new_err(format!("Arrow data could not be read: {e}"))
}

/// True when `obj` offers an Arrow array or stream.
pub fn is_arrow(obj: &Bound<'_, PyAny>) -> bool {
    obj.hasattr("__arrow_c_array__").unwrap_or(false)
        || obj.hasattr("__arrow_c_stream__").unwrap_or(false)
}

fn capsule_ptr<T>(capsule: &Bound<'_, PyCapsule>, want: &str) -> PyResult<*mut T> {
    let name = capsule.name()?;
    if name.and_then(|n| n.to_str().ok()) != Some(want) {
        return Err(PyValueError::new_err(format!(
            "expected a PyCapsule named {want:?}"
        )));
    }
    let ptr = capsule.pointer().cast::<T>();
    if ptr.is_null() {
        return Err(PyValueError::new_err(format!("{want} capsule is empty")));
    }
    Ok(ptr)
}

/// The chunks of an Arrow object (one for `__arrow_c_array__`).
pub fn import(obj: &Bound<'_, PyAny>) -> PyResult<Vec<ArrayRef>> {
    if obj.hasattr("__arrow_c_array__")? {
        let pair = obj.call_method0("__arrow_c_array__")?;
        let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) = pair.extract()?;
        let schema_ptr = capsule_ptr::<FFI_ArrowSchema>(&schema, "arrow_schema")?;
        let array_ptr = capsule_ptr::<FFI_ArrowArray>(&array, "arrow_array")?;
        // SAFETY: the capsules hold a schema and an array (checked names,
        // non-null pointers); reading their release callbacks reads them.
        let released = unsafe { (*array_ptr).is_released() || (*schema_ptr).release().is_none() };
        if released {
            // A consumer took the array over already (the same capsules
            // passed twice): its buffers are gone.
            return Err(PyValueError::new_err(
                "Arrow data could not be read: the array capsule was already consumed",
            ));
        }
        return guarded(|| {
            // SAFETY: the capsules hold a live schema and array (checked
            // above), so their children and dictionaries can be read.
            if !unsafe { same_shape(&*schema_ptr, &*array_ptr, 0) } {
                return Err(ArrowError::InvalidArgumentError(
                    "the array's children do not match its schema's".into(),
                ));
            }
            // SAFETY: as above; `from_raw` moves the array out and marks
            // the capsule's copy released, as the C data interface's
            // consumers do.
            let data = unsafe { from_ffi(FFI_ArrowArray::from_raw(array_ptr), &*schema_ptr) }?;
            data.validate()?;
            Ok(vec![column(make_array(data))])
        });
    }
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.downcast_into::<PyCapsule>()?;
    let ptr = capsule_ptr(&capsule, "arrow_array_stream")?;
    guarded(|| {
        // SAFETY: as above, for a stream: the stream is moved out of the
        // capsule, whose copy is marked released.
        let mut stream = unsafe { FFI_ArrowArrayStream::from_raw(ptr) };
        if stream.release().is_none() {
            return Err(ArrowError::CDataInterface(
                "the stream capsule was already consumed".into(),
            ));
        }
        if let Some(len) = null_stream_len(&mut stream)? {
            return Ok(vec![new_null_array(&DataType::Null, len)]);
        }
        ArrayStreamReader::try_new(stream)?
            .map(|chunk| checked(chunk?).map(column))
            .collect()
    })
}

/// The total length of a stream of `null` arrays (`None` for any other
/// type), read without importing their buffers: Polars exports a `Null`
/// series with a buffer that the type does not have, which the import
/// refuses, and a null array has nothing else to read.
fn null_stream_len(stream: &mut FFI_ArrowArrayStream) -> Result<Option<usize>, ArrowError> {
    let failed = |what: &str, code: i32| {
        ArrowError::CDataInterface(format!("the stream's {what} failed (error code {code})"))
    };
    let (Some(get_schema), Some(get_next)) = (stream.get_schema(), stream.get_next()) else {
        return Err(ArrowError::CDataInterface(
            "the stream has no callbacks".into(),
        ));
    };
    let mut schema = FFI_ArrowSchema::empty();
    // SAFETY: the callbacks are the stream's own, called with the stream
    // (not released) and an empty schema for the producer to fill; the
    // schema releases itself when dropped. A stream's schema may be asked
    // for more than once, so the reader can ask again.
    let code = unsafe { get_schema(stream, &mut schema) };
    if code != 0 {
        return Err(failed("schema", code));
    }
    if schema.release().is_none() || schema.format() != "n" {
        return Ok(None);
    }
    let mut len = 0usize;
    loop {
        let mut array = FFI_ArrowArray::empty();
        // SAFETY: as above, with an empty array for the producer to fill;
        // the array releases its buffers when dropped, unread.
        let code = unsafe { get_next(stream, &mut array) };
        if code != 0 {
            return Err(failed("next array", code));
        }
        if array.is_released() {
            return Ok(Some(len));
        }
        len = len.saturating_add(array.len());
    }
}

/// Nesting deeper than this is refused (URLs are a flat column, or one
/// inside a one-column struct).
const MAX_DEPTH: usize = 16;

/// True when `array` has as many children as `schema` at every level, and
/// a dictionary where it has one: the import asserts it (a panic) rather
/// than reporting it.
fn same_shape(schema: &FFI_ArrowSchema, array: &FFI_ArrowArray, depth: usize) -> bool {
    let n = schema.children().count();
    depth < MAX_DEPTH
        && n == array.num_children()
        && (0..n).all(|i| same_shape(schema.child(i), array.child(i), depth + 1))
        && match (schema.dictionary(), array.dictionary()) {
            (Some(s), Some(a)) => same_shape(s, a, depth + 1),
            (None, None) => true,
            _ => false,
        }
}

/// `array` after a check of its buffers' sizes against its type and
/// length. An import trusts what the producer says; a schema that does not
/// match its array would otherwise be read as given, past the ends of the
/// buffers. The values themselves (offsets, views, UTF-8) are not checked
/// here (that would be a sixth of a batch call): [`lines`] reads every
/// string with bounds checks, and bytes that are not UTF-8 are an invalid
/// URL.
fn checked(array: ArrayRef) -> Result<ArrayRef, ArrowError> {
    array.to_data().validate()?;
    Ok(array)
}

/// Runs an import, its errors and any panic inside the Arrow crates
/// (which assert some invariants of what they import, such as the number
/// of a struct's children) made a `ValueError`.
fn guarded<T>(import: impl FnOnce() -> Result<T, ArrowError>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(import)) {
        Ok(result) => result.map_err(arrow_err),
        Err(_) => Err(PyValueError::new_err(
            "Arrow data could not be read: the array does not match its schema",
        )),
    }
}

/// A one-column struct (a table of one column) stands for its column.
fn column(array: ArrayRef) -> ArrayRef {
    if let Some(s) = array.as_any().downcast_ref::<StructArray>() {
        if s.num_columns() == 1 && s.null_count() == 0 {
            return Arc::clone(s.column(0));
        }
    }
    array
}

/// The error of a value whose offsets or view lie outside its buffers.
fn outside(i: usize) -> PyErr {
    PyValueError::new_err(format!(
        "Arrow data could not be read: value {i} lies outside the array's buffers"
    ))
}

/// The values of a string or binary array with offsets, each read with
/// bounds checks. The bytes are taken as they are: a string array is not
/// checked for UTF-8 (Spark hands over what a file held), and bytes that
/// are not UTF-8 are an invalid URL like any other.
fn offset_lines<'a, T: ByteArrayType>(
    a: &'a GenericByteArray<T>,
    out: &mut Vec<Line<'a>>,
) -> PyResult<()> {
    let offsets = a.value_offsets();
    let values = a.values().as_slice();
    for i in 0..a.len() {
        if a.is_null(i) {
            out.push(None);
            continue;
        }
        let (Some(start), Some(end)) = (offsets.get(i), offsets.get(i + 1)) else {
            return Err(outside(i));
        };
        let line = values.get(start.as_usize()..end.as_usize());
        out.push(Some(line.ok_or_else(|| outside(i))?));
    }
    Ok(())
}

/// The values of a string or binary view array, each read with bounds
/// checks: a view says where its bytes are (inline for up to 12 bytes, or
/// a data buffer and an offset in it: Arrow's view layout), which an import
/// does not check.
fn view_lines<'a, T: ByteViewType + ?Sized>(
    a: &'a GenericByteViewArray<T>,
    out: &mut Vec<Line<'a>>,
) -> PyResult<()> {
    const VIEW: usize = 16;
    const INLINE: usize = 12;
    let raw = a.views().inner().as_slice();
    let buffers = a.data_buffers();
    for (i, &view) in a.views().iter().enumerate() {
        if a.is_null(i) {
            out.push(None);
            continue;
        }
        // The fields of the 128-bit view, little-endian.
        let len = (view as u32) as usize;
        let bytes = if len <= INLINE {
            raw.get(i * VIEW + 4..i * VIEW + 4 + len)
        } else {
            let buffer = ((view >> 64) as u32) as usize;
            let offset = ((view >> 96) as u32) as usize;
            buffers
                .get(buffer)
                .and_then(|b| b.as_slice().get(offset..offset.saturating_add(len)))
        };
        out.push(Some(bytes.ok_or_else(|| outside(i))?));
    }
    Ok(())
}

/// The values of a fixed-size binary array.
fn fixed_lines<'a>(a: &'a FixedSizeBinaryArray, out: &mut Vec<Line<'a>>) -> PyResult<()> {
    let width = usize::try_from(a.value_length()).unwrap_or(0);
    let values = a.value_data();
    for i in 0..a.len() {
        if a.is_null(i) {
            out.push(None);
            continue;
        }
        let start = i.saturating_mul(width);
        let line = values.get(start..start.saturating_add(width));
        out.push(Some(line.ok_or_else(|| outside(i))?));
    }
    Ok(())
}

/// The values of a dictionary-encoded array: its keys looked up in its
/// values (themselves read as any other array), each key checked against
/// the number of values.
fn dictionary_lines<'a, K: ArrowDictionaryKeyType>(
    d: &'a DictionaryArray<K>,
    out: &mut Vec<Line<'a>>,
    depth: usize,
) -> PyResult<()> {
    let mut values = Vec::with_capacity(d.values().len());
    lines_at(d.values(), &mut values, depth + 1)?;
    for (i, k) in d.keys().iter().enumerate() {
        out.push(match k {
            None => None,
            Some(k) => *k
                .to_usize()
                .and_then(|k| values.get(k))
                .ok_or_else(|| outside(i))?,
        });
    }
    Ok(())
}

/// Appends the lines of one chunk to `out`. A chunk may hold strings or
/// bytes in any of Arrow's layouts (`utf8`, `large_utf8`, `utf8_view`,
/// `binary`, `large_binary`, `binary_view`, `fixed_size_binary`, each
/// dictionary-encoded or not) or be a `null` array. The bytes are never
/// decoded: whatever they are, each line gets a key or an invalid reason.
pub fn lines<'a>(array: &'a ArrayRef, out: &mut Vec<Line<'a>>) -> PyResult<()> {
    lines_at(array, out, 0)
}

fn lines_at<'a>(array: &'a ArrayRef, out: &mut Vec<Line<'a>>, depth: usize) -> PyResult<()> {
    if depth > 1 {
        return Err(PyTypeError::new_err(
            "an Arrow array of URLs cannot be a dictionary of dictionaries",
        ));
    }
    if let Some(a) = array.as_string_opt::<i32>() {
        offset_lines(a, out)
    } else if let Some(a) = array.as_string_opt::<i64>() {
        offset_lines(a, out)
    } else if let Some(a) = array.as_binary_opt::<i32>() {
        offset_lines(a, out)
    } else if let Some(a) = array.as_binary_opt::<i64>() {
        offset_lines(a, out)
    } else if let Some(a) = array.as_string_view_opt() {
        view_lines(a, out)
    } else if let Some(a) = array.as_binary_view_opt() {
        view_lines(a, out)
    } else if let Some(a) = array.as_fixed_size_binary_opt() {
        fixed_lines(a, out)
    } else if *array.data_type() == DataType::Null {
        out.extend(std::iter::repeat_n(None, array.len()));
        Ok(())
    } else if let DataType::Dictionary(key, _) = array.data_type() {
        match **key {
            DataType::Int8 => dictionary_lines(array.as_dictionary::<Int8Type>(), out, depth),
            DataType::Int16 => dictionary_lines(array.as_dictionary::<Int16Type>(), out, depth),
            DataType::Int32 => dictionary_lines(array.as_dictionary::<Int32Type>(), out, depth),
            DataType::Int64 => dictionary_lines(array.as_dictionary::<Int64Type>(), out, depth),
            DataType::UInt8 => dictionary_lines(array.as_dictionary::<UInt8Type>(), out, depth),
            DataType::UInt16 => dictionary_lines(array.as_dictionary::<UInt16Type>(), out, depth),
            DataType::UInt32 => dictionary_lines(array.as_dictionary::<UInt32Type>(), out, depth),
            DataType::UInt64 => dictionary_lines(array.as_dictionary::<UInt64Type>(), out, depth),
            _ => Err(not_text(array.data_type())),
        }
    } else {
        Err(not_text(array.data_type()))
    }
}

fn not_text(t: &DataType) -> PyErr {
    PyTypeError::new_err(format!(
        "an Arrow array of URLs must hold strings or bytes (utf8, large_utf8, utf8_view, \
         binary, large_binary, binary_view, fixed_size_binary, or a dictionary of one of \
         them), not {t}"
    ))
}

/// One chunk's result as a (schema, array) capsule pair.
pub fn export<'py>(py: Python<'py>, array: &dyn Array) -> PyResult<Bound<'py, PyTuple>> {
    let (ffi_array, ffi_schema) = to_ffi(&array.to_data()).map_err(arrow_err)?;
    let schema = PyCapsule::new(py, Exported(ffi_schema), Some(cname("arrow_schema")))?;
    let array = PyCapsule::new(py, Exported(ffi_array), Some(cname("arrow_array")))?;
    PyTuple::new(py, [schema.into_any(), array.into_any()])
}

fn cname(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

/// An exported schema or array inside a capsule. The consumer moves it out
/// and marks it released; if nobody does, dropping it with the capsule
/// releases it.
#[repr(transparent)]
struct Exported<T>(T);

// SAFETY: the C data interface lets an exported schema be moved to and
// released on any thread; it is only ever touched by one thread at a time.
unsafe impl Send for Exported<FFI_ArrowSchema> {}

// SAFETY: as for the schema: an exported array may be moved to and
// released on any thread, and one thread at a time touches it.
unsafe impl Send for Exported<FFI_ArrowArray> {}

/// Every line's output value: its key, or `None` for a missing or invalid
/// line. `lines` are the inputs that `Same` keys refer to.
pub fn key_values<'a>(keys: &'a Keys, lines: &[Line<'a>]) -> Vec<Line<'a>> {
    keys.iter()
        .zip(lines)
        .map(|(k, line)| match k {
            KeyRef::Same => *line,
            KeyRef::Key(key) => Some(key),
            KeyRef::Null | KeyRef::Invalid(_) => None,
        })
        .collect()
}

/// Values as a string array: utf8 with 32-bit offsets unless they pass
/// 2 GiB, then large_utf8.
pub fn key_array(values: &[Line<'_>]) -> ArrayRef {
    let total: usize = values.iter().map(|v| v.map_or(0, <[u8]>::len)).sum();
    // Keys are ASCII, and so is an unchanged input (a valid URI is ASCII);
    // a value that is not UTF-8 would be a bug elsewhere, and is written
    // lossily (up to three bytes a byte) rather than handed to Arrow as a
    // string.
    let ascii = values.iter().all(|v| v.is_none_or(<[u8]>::is_ascii));
    let most = if ascii {
        total
    } else {
        total.saturating_mul(3)
    };
    if i32::try_from(most).is_ok() {
        string_array::<i32>(values, total, ascii)
    } else {
        string_array::<i64>(values, total, ascii)
    }
}

fn string_array<O: OffsetSizeTrait>(values: &[Line<'_>], total: usize, ascii: bool) -> ArrayRef {
    let len = values.len();
    let mut offsets: Vec<O> = Vec::with_capacity(len + 1);
    let mut bytes: Vec<u8> = Vec::with_capacity(total);
    let mut valid: Vec<bool> = Vec::with_capacity(len);
    offsets.push(O::usize_as(0));
    for v in values.iter().copied() {
        valid.push(v.is_some());
        let v = v.unwrap_or_default();
        if ascii || std::str::from_utf8(v).is_ok() {
            bytes.extend_from_slice(v);
        } else {
            bytes.extend_from_slice(String::from_utf8_lossy(v).as_bytes());
        }
        offsets.push(O::usize_as(bytes.len()));
    }
    let nulls = NullBuffer::from(valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    let offsets = ScalarBuffer::from(offsets);
    // SAFETY: the offsets start at 0 and never decrease, and end at
    // `bytes.len()`, which fits `O` (`key_array` counts a lossy value at
    // three times its bytes); every value is ASCII, checked to be UTF-8
    // above, or made so.
    let array = unsafe {
        GenericStringArray::<O>::new_unchecked(
            OffsetBuffer::new_unchecked(offsets),
            Buffer::from_vec(bytes),
            nulls,
        )
    };
    Arc::new(array)
}

/// A boolean array without nulls.
pub fn bool_array(values: &[bool]) -> ArrayRef {
    Arc::new(BooleanArray::new(BooleanBuffer::from(values), None))
}

/// 16-byte fingerprints, big-endian, null where `None`.
pub fn fingerprint_array(fps: &[Option<u128>]) -> PyResult<ArrayRef> {
    let mut bytes = Vec::with_capacity(fps.len() * 16);
    for fp in fps {
        bytes.extend_from_slice(&fp.unwrap_or(0).to_be_bytes());
    }
    let nulls = NullBuffer::from_iter(fps.iter().map(Option::is_some));
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    let array =
        FixedSizeBinaryArray::try_new(16, Buffer::from_vec(bytes), nulls).map_err(arrow_err)?;
    Ok(Arc::new(array))
}
