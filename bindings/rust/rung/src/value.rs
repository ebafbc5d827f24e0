use std::ffi::CString;
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_char;
use std::ptr::{self, NonNull};

use rung_sys as sys;

use crate::{borrowed_str, cstring, Error, Result};

/// A tensor's element type: ONNX's TensorProto numbers (`rung_element_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// 32-bit float (f32).
    Float32,
    /// u8.
    Uint8,
    /// i8.
    Int8,
    /// u16.
    Uint16,
    /// i16.
    Int16,
    /// i32.
    Int32,
    /// i64.
    Int64,
    /// UTF-8 strings ([`Value::strings`]).
    String,
    /// bool, one byte each.
    Bool,
    /// IEEE half float (raw bytes).
    Float16,
    /// 64-bit float (f64).
    Float64,
    /// u32.
    Uint32,
    /// u64.
    Uint64,
    /// bfloat16 (raw bytes).
    BFloat16,
    /// float8 e4m3fn (raw bytes).
    Float8E4M3FN,
    /// float8 e4m3fnuz (raw bytes).
    Float8E4M3FNUZ,
    /// float8 e5m2 (raw bytes).
    Float8E5M2,
    /// float8 e5m2fnuz (raw bytes).
    Float8E5M2FNUZ,
    /// A number this crate does not know (a newer library's, or none).
    Unknown(i32),
}

impl ElementType {
    /// The type from its ONNX number.
    pub fn from_raw(raw: sys::rung_element_type) -> ElementType {
        use ElementType::*;
        match raw {
            sys::RUNG_FLOAT32 => Float32,
            sys::RUNG_UINT8 => Uint8,
            sys::RUNG_INT8 => Int8,
            sys::RUNG_UINT16 => Uint16,
            sys::RUNG_INT16 => Int16,
            sys::RUNG_INT32 => Int32,
            sys::RUNG_INT64 => Int64,
            sys::RUNG_STRING => String,
            sys::RUNG_BOOL => Bool,
            sys::RUNG_FLOAT16 => Float16,
            sys::RUNG_FLOAT64 => Float64,
            sys::RUNG_UINT32 => Uint32,
            sys::RUNG_UINT64 => Uint64,
            sys::RUNG_BFLOAT16 => BFloat16,
            sys::RUNG_FLOAT8E4M3FN => Float8E4M3FN,
            sys::RUNG_FLOAT8E4M3FNUZ => Float8E4M3FNUZ,
            sys::RUNG_FLOAT8E5M2 => Float8E5M2,
            sys::RUNG_FLOAT8E5M2FNUZ => Float8E5M2FNUZ,
            other => Unknown(other),
        }
    }

    /// The type's ONNX number.
    pub fn raw(self) -> sys::rung_element_type {
        use ElementType::*;
        match self {
            Float32 => sys::RUNG_FLOAT32,
            Uint8 => sys::RUNG_UINT8,
            Int8 => sys::RUNG_INT8,
            Uint16 => sys::RUNG_UINT16,
            Int16 => sys::RUNG_INT16,
            Int32 => sys::RUNG_INT32,
            Int64 => sys::RUNG_INT64,
            String => sys::RUNG_STRING,
            Bool => sys::RUNG_BOOL,
            Float16 => sys::RUNG_FLOAT16,
            Float64 => sys::RUNG_FLOAT64,
            Uint32 => sys::RUNG_UINT32,
            Uint64 => sys::RUNG_UINT64,
            BFloat16 => sys::RUNG_BFLOAT16,
            Float8E4M3FN => sys::RUNG_FLOAT8E4M3FN,
            Float8E4M3FNUZ => sys::RUNG_FLOAT8E4M3FNUZ,
            Float8E5M2 => sys::RUNG_FLOAT8E5M2,
            Float8E5M2FNUZ => sys::RUNG_FLOAT8E5M2FNUZ,
            Unknown(raw) => raw,
        }
    }

    /// "float32", "int64", ... as the library names it; "unknown" for a number it does not know.
    pub fn name(self) -> &'static str {
        // Static storage in the library.
        unsafe { borrowed_str(sys::rung_element_type_name(self.raw())) }
    }

    /// Bytes per element; None for strings and unknown types.
    pub fn byte_width(self) -> Option<usize> {
        use ElementType::*;
        match self {
            Uint8 | Int8 | Bool | Float8E4M3FN | Float8E4M3FNUZ | Float8E5M2 | Float8E5M2FNUZ => Some(1),
            Uint16 | Int16 | Float16 | BFloat16 => Some(2),
            Float32 | Int32 | Uint32 => Some(4),
            Float64 | Int64 | Uint64 => Some(8),
            String | Unknown(_) => None,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose memory is a tensor element's: f32, f64, the integers and
/// bool. Sealed: [`Value::as_slice`] reads library memory as `T`, which is
/// sound only for these. Other types (float16, bfloat16, float8) go through
/// [`Value::view_bytes`] and [`Value::bytes`].
pub trait Element: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The element type this Rust type holds.
    const TYPE: ElementType;
    /// Whether these bytes are valid values of the type (bool: each 0 or 1).
    #[doc(hidden)]
    fn valid_bytes(_bytes: &[u8]) -> bool {
        true
    }
}

macro_rules! element {
    ($($t:ty => $e:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const TYPE: ElementType = ElementType::$e;
        }
    )*};
}

element!(f32 => Float32, f64 => Float64, u8 => Uint8, i8 => Int8, u16 => Uint16, i16 => Int16,
         i32 => Int32, i64 => Int64, u32 => Uint32, u64 => Uint64);

impl sealed::Sealed for bool {}
impl Element for bool {
    const TYPE: ElementType = ElementType::Bool;
    fn valid_bytes(bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| b <= 1)
    }
}

/// A tensor. An input made with [`Value::view`] borrows the caller's memory
/// for `'a` (nothing is copied, and the borrow keeps it unchanged while the
/// value lives); one made with [`Value::strings`] and the outputs of
/// [`Session::run`](crate::Session::run) are owned (`Value<'static>`).
///
/// Read-only once made, so it can be shared between threads.
pub struct Value<'a> {
    raw: NonNull<sys::rung_value>,
    _data: PhantomData<&'a [u8]>,
}

// The header: a value's accessors are callable from any thread, and nothing
// changes it after creation.
unsafe impl<'a> Send for Value<'a> {}
unsafe impl<'a> Sync for Value<'a> {}

impl<'a> Value<'a> {
    /// An input named `name` that views `data` (C order) with this shape; no copy.
    /// Fails when the shape's element count is not `data.len()`.
    pub fn view<T: Element>(name: &str, data: &'a [T], shape: &[i64]) -> Result<Value<'a>> {
        let bytes = std::mem::size_of_val(data);
        // Safety: `data` is borrowed for 'a and immutable meanwhile, as the view requires.
        unsafe { Value::create_view(name, T::TYPE, data.as_ptr() as *const sys::c_void, bytes, shape) }
    }

    /// An input of any fixed-width type (float16, bfloat16, float8, ...) that
    /// views raw little-endian `data`; no copy. Fails when the byte count is
    /// not what the type and shape need.
    pub fn view_bytes(name: &str, element_type: ElementType, data: &'a [u8], shape: &[i64]) -> Result<Value<'a>> {
        if element_type == ElementType::String {
            return Err(Error::invalid(format!("input '{}': a string tensor is made with Value::strings", name)));
        }
        // Safety: as in `view`.
        unsafe { Value::create_view(name, element_type, data.as_ptr() as *const sys::c_void, data.len(), shape) }
    }

    unsafe fn create_view(
        name: &str,
        element_type: ElementType,
        data: *const sys::c_void,
        byte_size: usize,
        shape: &[i64],
    ) -> Result<Value<'a>> {
        let c_name = cstring("an input name", name)?;
        let mut out: *mut sys::rung_value = ptr::null_mut();
        Error::check(sys::rung_value_create_view(
            c_name.as_ptr(),
            element_type.raw(),
            shape.as_ptr(),
            shape.len(),
            data,
            byte_size,
            &mut out,
        ))?;
        Value::from_raw(out, "rung_value_create_view")
    }

    /// Takes ownership of a value the library made.
    pub(crate) unsafe fn from_raw(raw: *mut sys::rung_value, call: &str) -> Result<Value<'a>> {
        NonNull::new(raw)
            .map(|raw| Value { raw, _data: PhantomData })
            .ok_or_else(|| Error::new(crate::ErrorCode::Runtime, format!("{} succeeded but gave no value", call)))
    }

    pub(crate) fn as_ptr(&self) -> *const sys::rung_value {
        self.raw.as_ptr()
    }

    /// The input or output's name.
    pub fn name(&self) -> &str {
        unsafe { borrowed_str(sys::rung_value_name(self.as_ptr())) }
    }

    /// The element type.
    pub fn element_type(&self) -> ElementType {
        ElementType::from_raw(unsafe { sys::rung_value_element_type(self.as_ptr()) })
    }

    /// The shape (empty for a scalar).
    pub fn shape(&self) -> &[i64] {
        let mut rank = 0usize;
        let dims = unsafe { sys::rung_value_shape(self.as_ptr(), &mut rank) };
        if dims.is_null() || rank == 0 {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(dims, rank) }
    }

    /// How many elements the shape holds.
    pub fn element_count(&self) -> usize {
        self.shape().iter().map(|&d| d.max(0) as usize).product()
    }

    /// The elements' bytes, little-endian, C order; empty for strings.
    pub fn bytes(&self) -> &[u8] {
        let mut size = 0usize;
        let data = unsafe { sys::rung_value_data(self.as_ptr(), &mut size) };
        if data.is_null() || size == 0 {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(data as *const u8, size) }
    }

    /// The elements as `T`; an error unless the value's element type is `T`'s.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        let actual = self.element_type();
        if actual != T::TYPE {
            return Err(Error::invalid(format!(
                "value '{}' holds {}, not {}",
                self.name(),
                actual.name(),
                T::TYPE.name()
            )));
        }
        let bytes = self.bytes();
        if bytes.is_empty() {
            return Ok(&[]);
        }
        let width = std::mem::size_of::<T>();
        if bytes.len() % width != 0 || (bytes.as_ptr() as usize) % std::mem::align_of::<T>() != 0 {
            return Err(Error::invalid(format!(
                "value '{}': its {} bytes cannot be read as {} in place (size or alignment)",
                self.name(),
                bytes.len(),
                T::TYPE.name()
            )));
        }
        if !T::valid_bytes(bytes) {
            return Err(Error::invalid(format!(
                "value '{}' holds a {} byte other than 0 or 1",
                self.name(),
                T::TYPE.name()
            )));
        }
        // Safety: type, length, alignment and bit patterns checked above; the
        // memory is the value's and immutable while it lives.
        Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const T, bytes.len() / width) })
    }

    /// A string tensor's elements; an error for other types. (`as_strings`,
    /// as `Value::strings` is the constructor.)
    pub fn as_strings(&self) -> Result<Vec<&str>> {
        if self.element_type() != ElementType::String {
            return Err(Error::invalid(format!(
                "value '{}' holds {}, not strings",
                self.name(),
                self.element_type().name()
            )));
        }
        let count = unsafe { sys::rung_value_string_count(self.as_ptr()) };
        (0..count)
            .map(|i| {
                let p = unsafe { sys::rung_value_string(self.as_ptr(), i) };
                if p.is_null() {
                    return Err(Error::invalid(format!("value '{}': string {} is missing", self.name(), i)));
                }
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_str()
                    .map_err(|_| Error::invalid(format!("value '{}': string {} is not UTF-8", self.name(), i)))
            })
            .collect()
    }
}

impl Value<'static> {
    /// A string tensor, copied: as many strings as the shape has elements.
    pub fn strings<S: AsRef<str>>(name: &str, strings: &[S], shape: &[i64]) -> Result<Value<'static>> {
        let c_name = cstring("an input name", name)?;
        let owned: Vec<CString> = strings
            .iter()
            .map(|s| cstring(&format!("a string of input '{}'", name), s.as_ref()))
            .collect::<Result<_>>()?;
        let pointers: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
        let mut out: *mut sys::rung_value = ptr::null_mut();
        unsafe {
            Error::check(sys::rung_value_create_strings(
                c_name.as_ptr(),
                shape.as_ptr(),
                shape.len(),
                pointers.as_ptr(),
                pointers.len(),
                &mut out,
            ))?;
            Value::from_raw(out, "rung_value_create_strings")
        }
    }
}

impl<'a> Drop for Value<'a> {
    fn drop(&mut self) {
        unsafe { sys::rung_value_free(self.raw.as_ptr()) }
    }
}

impl<'a> fmt::Debug for Value<'a> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Value")
            .field("name", &self.name())
            .field("element_type", &self.element_type())
            .field("shape", &self.shape())
            .finish()
    }
}
