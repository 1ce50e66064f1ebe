// SPDX-License-Identifier: Apache-2.0
#include "io/pickle.h"

#include <cstring>
#include <map>
#include <unordered_map>

#include "core/error.h"
#include "io/printable.h"

namespace ws::io::pickle {
namespace {

// Callables the allowlist resolves; everything else a GLOBAL may name is a storage type.
const char* const kOrderedDict = "collections.OrderedDict";
const char* const kRebuildTensor = "torch._utils._rebuild_tensor_v2";
const char* const kRebuildParameter = "torch._utils._rebuild_parameter";
const char* const kRebuildParameterState = "torch._utils._rebuild_parameter_with_state";
const char* const kCodecsEncode = "_codecs.encode";  // protocol 2 spelling of a bytes object

bool allowed_global(const std::string& name) {
  torch::Dtype dt;
  return name == kOrderedDict || name == kRebuildTensor || name == kRebuildParameter ||
         name == kRebuildParameterState || name == kCodecsEncode ||
         (name.rfind("torch.", 0) == 0 && storage_dtype(name.substr(6), &dt));
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::Tuple: return "tuple";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Global: return "global";
    case Kind::Storage: return "storage";
    case Kind::Tensor: return "tensor";
  }
  return "?";
}

}  // namespace

bool storage_dtype(const std::string& name, torch::Dtype* dtype) {
  static const std::map<std::string, torch::Dtype> table = {
      {"FloatStorage", torch::kFloat32},  {"HalfStorage", torch::kFloat16}, {"BFloat16Storage", torch::kBFloat16},
      {"DoubleStorage", torch::kFloat64}, {"LongStorage", torch::kInt64},   {"IntStorage", torch::kInt32},
      {"ShortStorage", torch::kInt16},    {"CharStorage", torch::kInt8},    {"ByteStorage", torch::kUInt8},
      {"BoolStorage", torch::kBool},      {"UntypedStorage", torch::kUInt8}};
  auto it = table.find(name);
  if (it == table.end()) return false;
  *dtype = it->second;
  return true;
}

Unpickler::Unpickler(std::string context, const uint8_t* data, size_t size, PersistentLoad persistent_load)
    : ctx_(std::move(context)), data_(data), size_(size), persistent_load_(std::move(persistent_load)) {}

Value* Unpickler::make(Kind k) {
  arena_.emplace_back();
  arena_.back().kind = k;
  return &arena_.back();
}

void Unpickler::fail(const std::string& what) const {
  throw Error(ctx_ + ": bad pickle at byte " + std::to_string(pos_) + ": " + what);
}

const Value* Unpickler::load() {
  std::vector<const Value*> stack;
  std::vector<size_t> marks;
  std::unordered_map<uint64_t, const Value*> memo;

  auto need = [&](size_t n) {
    if (n > size_ - pos_) fail("unexpected end of data (truncated?)");
  };
  auto uint = [&](int n) {
    need(static_cast<size_t>(n));
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | data_[pos_ + static_cast<size_t>(i)];
    pos_ += static_cast<size_t>(n);
    return v;
  };
  auto bytes = [&](uint64_t n) {
    need(n);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  };
  auto line = [&]() {
    const void* nl = std::memchr(data_ + pos_, '\n', size_ - pos_);
    if (!nl) fail("unterminated line");
    size_t n = static_cast<const uint8_t*>(nl) - (data_ + pos_);
    std::string s = bytes(n);
    ++pos_;
    return s;
  };
  auto pop = [&]() {
    if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) fail("stack underflow");
    const Value* v = stack.back();
    stack.pop_back();
    return v;
  };
  auto top = [&]() -> Value* {
    if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) fail("stack underflow");
    return const_cast<Value*>(stack.back());
  };
  auto pop_mark = [&]() {
    if (marks.empty()) fail("no MARK on the stack");
    std::vector<const Value*> items(stack.begin() + static_cast<std::ptrdiff_t>(marks.back()), stack.end());
    stack.resize(marks.back());
    marks.pop_back();
    return items;
  };
  auto push_int = [&](int64_t v) {
    Value* x = make(Kind::Int);
    x->i = v;
    stack.push_back(x);
  };
  auto push_str = [&](Kind k, std::string s) {
    Value* x = make(k);
    x->s = std::move(s);
    stack.push_back(x);
  };
  auto tuple = [&](std::vector<const Value*> items) {
    Value* t = make(Kind::Tuple);
    t->items = std::move(items);
    stack.push_back(t);
  };
  auto push_global = [&](const std::string& module, const std::string& name) {
    std::string full = module + "." + name;
    // The whole point: a name outside the allowlist is never resolved, let alone called.
    if (!allowed_global(full))
      throw Error(ctx_ + ": refused: the pickle references global '" + printable(full) +
                  "', which is not part of a state dict (only OrderedDict, tensors and storages are allowed)");
    push_str(Kind::Global, full);
  };
  auto set_items = [&](Value* d, const std::vector<const Value*>& kv) {
    if (d->kind != Kind::Dict) fail(std::string("SETITEM(S) on a ") + kind_name(d->kind));
    if (kv.size() % 2) fail("odd number of items for SETITEMS");
    for (size_t i = 0; i < kv.size(); i += 2) d->dict.emplace_back(kv[i], kv[i + 1]);
  };
  auto memo_get = [&](uint64_t k) {
    auto it = memo.find(k);
    if (it == memo.end()) fail("memo key " + std::to_string(k) + " was never stored");
    stack.push_back(it->second);
  };

  while (true) {
    need(1);
    uint8_t op = data_[pos_++];
    switch (op) {
      case 0x80: uint(1); break;  // PROTO
      case 0x95: uint(8); break;  // FRAME: framing only matters to streaming readers
      case '}': stack.push_back(make(Kind::Dict)); break;
      case ']': stack.push_back(make(Kind::List)); break;
      case ')': stack.push_back(make(Kind::Tuple)); break;
      case '(': marks.push_back(stack.size()); break;
      case 'd': {
        Value* d = make(Kind::Dict);
        set_items(d, pop_mark());
        stack.push_back(d);
        break;
      }
      case 'l': {
        Value* l = make(Kind::List);
        l->items = pop_mark();
        stack.push_back(l);
        break;
      }
      case 't': tuple(pop_mark()); break;
      case 0x85: {
        auto a = pop();
        tuple({a});
        break;
      }
      case 0x86: {
        auto b = pop();
        auto a = pop();
        tuple({a, b});
        break;
      }
      case 0x87: {
        auto c = pop();
        auto b = pop();
        auto a = pop();
        tuple({a, b, c});
        break;
      }
      case 'a': {
        auto v = pop();
        Value* l = top();
        if (l->kind != Kind::List) fail(std::string("APPEND to a ") + kind_name(l->kind));
        l->items.push_back(v);
        break;
      }
      case 'e': {
        auto items = pop_mark();
        Value* l = top();
        if (l->kind != Kind::List) fail(std::string("APPENDS to a ") + kind_name(l->kind));
        l->items.insert(l->items.end(), items.begin(), items.end());
        break;
      }
      case 's': {
        auto v = pop();
        auto k = pop();
        set_items(top(), {k, v});
        break;
      }
      case 'u': {
        auto kv = pop_mark();
        set_items(top(), kv);
        break;
      }
      case 'X': push_str(Kind::Str, bytes(uint(4))); break;     // BINUNICODE
      case 0x8c: push_str(Kind::Str, bytes(uint(1))); break;    // SHORT_BINUNICODE
      case 0x8d: push_str(Kind::Str, bytes(uint(8))); break;    // BINUNICODE8
      case 'T': push_str(Kind::Str, bytes(uint(4))); break;     // BINSTRING
      case 'U': push_str(Kind::Str, bytes(uint(1))); break;     // SHORT_BINSTRING
      case 'B': push_str(Kind::Bytes, bytes(uint(4))); break;   // BINBYTES
      case 'C': push_str(Kind::Bytes, bytes(uint(1))); break;   // SHORT_BINBYTES
      case 0x8e: push_str(Kind::Bytes, bytes(uint(8))); break;  // BINBYTES8
      case 'c': {
        std::string module = line();
        std::string name = line();
        push_global(module, name);
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        auto name = pop();
        auto module = pop();
        if (module->kind != Kind::Str || name->kind != Kind::Str) fail("STACK_GLOBAL needs two strings");
        push_global(module->s, name->s);
        break;
      }
      case 'q': memo[uint(1)] = top(); break;
      case 'r': memo[uint(4)] = top(); break;
      case 0x94: memo[memo.size()] = top(); break;  // MEMOIZE
      case 'h': memo_get(uint(1)); break;
      case 'j': memo_get(uint(4)); break;
      case 'J': push_int(static_cast<int32_t>(uint(4))); break;
      case 'K': push_int(static_cast<int64_t>(uint(1))); break;
      case 'M': push_int(static_cast<int64_t>(uint(2))); break;
      case 0x8a:    // LONG1
      case 0x8b: {  // LONG4
        uint64_t n = op == 0x8a ? uint(1) : uint(4);
        if (n > 8) fail("integer of " + std::to_string(n) + " bytes is too large");
        uint64_t v = n ? uint(static_cast<int>(n)) : 0;
        if (n && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);  // sign-extend
        push_int(static_cast<int64_t>(v));
        break;
      }
      case 'I': {  // INT (text): protocol 0 spelling, also of booleans
        std::string s = line();
        Value* x = make(Kind::Int);
        if (s == "00" || s == "01") {
          x->kind = Kind::Bool;
          x->i = s == "01";
        } else {
          try {
            size_t used = 0;
            x->i = std::stoll(s, &used);
            if (used != s.size()) throw std::invalid_argument(s);
          } catch (const std::exception&) {
            fail("bad INT '" + printable(s) + "'");
          }
        }
        stack.push_back(x);
        break;
      }
      case 'G': {  // BINFLOAT, big-endian
        need(8);
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | data_[pos_ + static_cast<size_t>(i)];
        pos_ += 8;
        Value* x = make(Kind::Float);
        std::memcpy(&x->f, &bits, 8);
        stack.push_back(x);
        break;
      }
      case 0x88:
      case 0x89: {
        Value* x = make(Kind::Bool);
        x->i = op == 0x88;
        stack.push_back(x);
        break;
      }
      case 'N': stack.push_back(make(Kind::None)); break;
      case '0': pop(); break;
      case '1': pop_mark(); break;
      case '2': stack.push_back(top()); break;
      case 'Q': {  // BINPERSID
        auto pid = pop();
        Value* s = make(Kind::Storage);
        s->tensor = persistent_load_(*pid);
        stack.push_back(s);
        break;
      }
      case 'R':     // REDUCE
      case 0x81: {  // NEWOBJ
        auto args = pop();
        auto fn = pop();
        if (fn->kind != Kind::Global) fail(std::string("call of a ") + kind_name(fn->kind));
        if (args->kind != Kind::Tuple) fail("call arguments are not a tuple");
        stack.push_back(call(fn->s, args->items));
        break;
      }
      case 'b': {  // BUILD: OrderedDict's `_metadata` and tensor state carry no weights
        auto state = pop();
        (void)state;
        Value* obj = top();
        if (obj->kind != Kind::Dict && obj->kind != Kind::Tensor)
          fail(std::string("BUILD on a ") + kind_name(obj->kind));
        break;
      }
      case '.': {  // STOP
        if (stack.size() != 1 || !marks.empty())
          fail("STOP with " + std::to_string(stack.size()) + " values on the stack");
        return stack.back();
      }
      default: {
        --pos_;
        char buf[8];
        std::snprintf(buf, sizeof buf, "0x%02x", op);
        fail(std::string("unsupported opcode ") + buf);
      }
    }
  }
}

}  // namespace ws::io::pickle

namespace ws::io::pickle {
namespace {

// Python's str is UTF-8 here; `_codecs.encode(s, 'latin1')` maps code points < 256 to bytes.
bool latin1(const std::string& utf8, std::string* out) {
  for (size_t i = 0; i < utf8.size(); ++i) {
    auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
    } else if ((c == 0xc2 || c == 0xc3) && i + 1 < utf8.size()) {
      out->push_back(static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(utf8[++i]) & 0x3f)));
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

const Value* Unpickler::call(const std::string& fn, const std::vector<const Value*>& args) {
  auto int_list = [&](const Value* v, const char* what) {
    if (v->kind != Kind::Tuple && v->kind != Kind::List) fail(fn + ": " + what + " is not a tuple");
    std::vector<int64_t> out;
    for (const Value* x : v->items) {
      if (x->kind != Kind::Int || x->i < 0) fail(fn + ": " + what + " holds a non-index value");
      out.push_back(x->i);
    }
    return out;
  };

  if (fn == kOrderedDict) {
    Value* d = make(Kind::Dict);
    if (args.empty()) return d;
    if (args.size() == 1 && args[0]->kind == Kind::List) {
      for (const Value* kv : args[0]->items) {
        if (kv->kind != Kind::Tuple || kv->items.size() != 2) fail("OrderedDict items are not pairs");
        d->dict.emplace_back(kv->items[0], kv->items[1]);
      }
      return d;
    }
    fail("OrderedDict called with unexpected arguments");
  }
  if (fn == kRebuildTensor) {
    // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
    if (args.size() < 4) fail(fn + " needs at least 4 arguments, got " + std::to_string(args.size()));
    if (args[0]->kind != Kind::Storage) fail(fn + ": first argument is not a storage");
    if (args[1]->kind != Kind::Int || args[1]->i < 0) fail(fn + ": bad storage offset");
    const torch::Tensor& storage = args[0]->tensor;
    int64_t offset = args[1]->i;
    auto sizes = int_list(args[2], "size");
    auto strides = int_list(args[3], "stride");
    if (sizes.size() != strides.size()) fail(fn + ": size and stride differ in length");
    Value* t = make(Kind::Tensor);
    bool empty = false;
    for (auto s : sizes) empty |= s == 0;
    if (empty) {
      t->tensor = torch::empty(sizes, storage.options());
      return t;
    }
    // The furthest element must lie inside the storage: a lying checkpoint reads nothing else.
    int64_t last = offset;
    for (size_t i = 0; i < sizes.size(); ++i) {
      int64_t span = 0;
      if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) || __builtin_add_overflow(last, span, &last))
        fail(fn + ": size/stride overflow");
    }
    if (last >= storage.numel())
      fail(fn + ": tensor of size [" + std::to_string(sizes.size()) + " dims] at offset " + std::to_string(offset) +
           " runs past its storage of " + std::to_string(storage.numel()) + " elements");
    t->tensor = storage.as_strided(sizes, strides, offset);
    // A stride of 0 (torch.save of an expanded tensor) would alias one element many times;
    // loaders write into what they read, so such a tensor gets its own memory.
    bool aliased = false;
    for (size_t i = 0; i < sizes.size(); ++i) aliased |= strides[i] == 0 && sizes[i] > 1;
    if (aliased) t->tensor = t->tensor.contiguous();
    return t;
  }
  if (fn == kRebuildParameter || fn == kRebuildParameterState) {
    if (args.empty() || args[0]->kind != Kind::Tensor) fail(fn + ": first argument is not a tensor");
    return args[0];
  }
  if (fn == kCodecsEncode) {
    if (args.empty() || args[0]->kind != Kind::Str) fail(fn + ": first argument is not a string");
    Value* b = make(Kind::Bytes);
    if (!latin1(args[0]->s, &b->s)) fail(fn + ": string is not latin-1");
    return b;
  }
  fail("'" + fn + "' cannot be called");
}

}  // namespace ws::io::pickle
