// RegexFullMatch (opset 20): whether each string matches `pattern` (RE2 syntax) in full.
// A small RE2-compatible matcher: the pattern compiles to an NFA program run as a Pike VM over
// the UTF-8 code points, so matching takes time linear in the input and never recurses (no
// stack overflow on long strings, no exponential backtracking). Supported: literals, escapes,
// ., [classes] (ranges, negation, \d\w\s and [:posix:] classes), groups ( ), (?: ), (?i)
// flags, | and the quantifiers * + ? {n} {n,} {n,m} (greedy or lazy), ^ $ \A \z \b \B.
// Back-references and look-around do not exist in RE2 and are rejected.
#include <algorithm>
#include <cctype>
#include <memory>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/string/utf8.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

constexpr size_t kMaxProgram = 200000;  // instructions, after expanding counted repeats
constexpr int kMaxNesting = 1000;
constexpr int kMaxRepeat = 1000;  // RE2's own limit for {n,m}

struct Range {
  char32_t lo, hi;
};

struct CharClass {
  std::vector<Range> ranges;
  bool negated = false;
  bool Matches(char32_t c) const {
    bool in = false;
    for (const Range& r : ranges)
      if (c >= r.lo && c <= r.hi) {
        in = true;
        break;
      }
    return in != negated;
  }
};

// The syntax tree.
struct Node {
  enum Kind { kEmpty, kClass, kAny, kAnyNl, kConcat, kAlt, kRepeat, kBeginText, kEndText, kWordB, kNotWordB };
  Kind kind = kEmpty;
  CharClass cls;
  std::vector<std::unique_ptr<Node>> kids;
  int min = 0, max = -1;  // kRepeat; max -1: unbounded
};

bool IsWordChar(char32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

void AddPerlClass(char kind, CharClass& cls) {
  std::vector<Range> r;
  switch (std::tolower(kind)) {
    case 'd': r = {{'0', '9'}}; break;
    case 'w': r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; break;
    case 's': r = {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}}; break;
  }
  if (std::isupper(kind)) {
    // Complement over all code points.
    std::sort(r.begin(), r.end(), [](const Range& a, const Range& b) { return a.lo < b.lo; });
    char32_t next = 0;
    for (const Range& x : r) {
      if (x.lo > next) cls.ranges.push_back({next, x.lo - 1});
      next = x.hi + 1;
    }
    cls.ranges.push_back({next, 0x10FFFF});
  } else {
    cls.ranges.insert(cls.ranges.end(), r.begin(), r.end());
  }
}

class Parser {
 public:
  Parser(const std::string& p, const KernelInfo& info) : p_(p), info_(info) {}

  std::unique_ptr<Node> Parse() {
    auto n = ParseAlt(0);
    if (i_ < p_.size()) Fail("unmatched ')'");
    return n;
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const {
    info_.Fail(StrCat("pattern '", p_, "': ", why, " (at offset ", i_, ")"));
  }
  bool More() const { return i_ < p_.size(); }
  char Peek() const { return p_[i_]; }

  std::unique_ptr<Node> ParseAlt(int depth) {
    if (depth > kMaxNesting) Fail("nested too deeply");
    auto first = ParseConcat(depth);
    if (!More() || Peek() != '|') return first;
    auto alt = std::make_unique<Node>();
    alt->kind = Node::kAlt;
    alt->kids.push_back(std::move(first));
    while (More() && Peek() == '|') {
      ++i_;
      alt->kids.push_back(ParseConcat(depth));
    }
    return alt;
  }

  std::unique_ptr<Node> ParseConcat(int depth) {
    auto cat = std::make_unique<Node>();
    cat->kind = Node::kConcat;
    while (More() && Peek() != '|' && Peek() != ')') {
      auto atom = ParseAtom(depth);
      if (!atom) continue;  // a flag group such as (?i)
      atom = ParseQuantifiers(std::move(atom));
      cat->kids.push_back(std::move(atom));
    }
    return cat;
  }

  std::unique_ptr<Node> ParseQuantifiers(std::unique_ptr<Node> atom) {
    while (More()) {
      int min = 0, max = -1;
      const char c = Peek();
      if (c == '*') {
        ++i_;
      } else if (c == '+') {
        min = 1, ++i_;
      } else if (c == '?') {
        max = 1, ++i_;
      } else if (c == '{' && ParseCount(min, max)) {
      } else {
        break;
      }
      if (More() && Peek() == '?') ++i_;  // lazy: the same language for a full match
      if (atom->kind == Node::kRepeat) Fail("bad repetition operator");
      if (atom->kind >= Node::kBeginText) Fail("cannot repeat an assertion");
      auto rep = std::make_unique<Node>();
      rep->kind = Node::kRepeat;
      rep->min = min;
      rep->max = max;
      rep->kids.push_back(std::move(atom));
      atom = std::move(rep);
    }
    return atom;
  }

  // {n}, {n,}, {n,m}; false (and nothing consumed) when this '{' is a literal.
  bool ParseCount(int& min, int& max) {
    size_t j = i_ + 1;
    auto number = [&](int& out) {
      const size_t start = j;
      int64_t v = 0;
      while (j < p_.size() && std::isdigit(static_cast<unsigned char>(p_[j]))) {
        v = std::min<int64_t>(v * 10 + (p_[j] - '0'), 1 << 20);
        ++j;
      }
      out = static_cast<int>(v);
      return j > start;
    };
    if (!number(min)) return false;
    max = min;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      max = -1;
      if (j < p_.size() && p_[j] != '}' && !number(max)) return false;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    i_ = j + 1;
    if (min > kMaxRepeat || max > kMaxRepeat) Fail("repeat count too large");
    if (max >= 0 && max < min) Fail("bad repeat range");
    return true;
  }

  std::unique_ptr<Node> Leaf(Node::Kind k) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    return n;
  }

  std::unique_ptr<Node> Literal(char32_t c) {
    auto n = Leaf(Node::kClass);
    n->cls.ranges.push_back({c, c});
    if (fold_case_) {
      const char32_t lo = utf8::ToLower(c), up = utf8::ToUpper(c);
      if (lo != c) n->cls.ranges.push_back({lo, lo});
      if (up != c) n->cls.ranges.push_back({up, up});
    }
    return n;
  }

  std::unique_ptr<Node> ParseAtom(int depth) {
    const char c = Peek();
    if (c == '(') {
      ++i_;
      if (More() && Peek() == '?') {
        ++i_;
        if (More() && Peek() == 'P') ++i_;
        if (More() && Peek() == '<') {  // named group (?P<name>...)
          while (More() && Peek() != '>') ++i_;
          if (!More()) Fail("unterminated group name");
          ++i_;
        } else {
          // Flags: (?i) (?-i) (?i:...) (?:...); s, m and U are accepted only when they change
          // nothing for a full match of a single line.
          bool negate = false, set_fold = fold_case_;
          while (More() && Peek() != ')' && Peek() != ':') {
            const char f = p_[i_++];
            if (f == '-') negate = true;
            else if (f == 'i') set_fold = !negate;
            else if (f == 's' || f == 'm' || f == 'U') {
              if (f == 's') dot_nl_ = !negate;
            } else Fail(StrCat("unsupported group flag '", f, "' (RE2 has no look-around)"));
          }
          if (!More()) Fail("missing ')'");
          if (Peek() == ')') {
            ++i_;
            fold_case_ = set_fold;
            return nullptr;
          }
          ++i_;  // ':'
          const bool saved = fold_case_;
          fold_case_ = set_fold;
          auto inner = ParseAlt(depth + 1);
          fold_case_ = saved;
          if (!More() || Peek() != ')') Fail("missing ')'");
          ++i_;
          return inner;
        }
      }
      auto inner = ParseAlt(depth + 1);
      if (!More() || Peek() != ')') Fail("missing ')'");
      ++i_;
      return inner;
    }
    if (c == '*' || c == '+' || c == '?') Fail("missing argument to repetition operator");
    if (c == '.') {
      ++i_;
      return Leaf(dot_nl_ ? Node::kAnyNl : Node::kAny);
    }
    if (c == '^') {
      ++i_;
      return Leaf(Node::kBeginText);
    }
    if (c == '$') {
      ++i_;
      return Leaf(Node::kEndText);
    }
    if (c == '[') return ParseClass();
    if (c == '\\') {
      ++i_;
      if (!More()) Fail("trailing backslash");
      const char e = p_[i_];
      switch (e) {
        case 'A': ++i_; return Leaf(Node::kBeginText);
        case 'z': ++i_; return Leaf(Node::kEndText);
        case 'b': ++i_; return Leaf(Node::kWordB);
        case 'B': ++i_; return Leaf(Node::kNotWordB);
        case 'd':
        case 'D':
        case 'w':
        case 'W':
        case 's':
        case 'S': {
          ++i_;
          auto n = Leaf(Node::kClass);
          AddPerlClass(e, n->cls);
          return n;
        }
        default: return Literal(ParseEscapeChar());
      }
    }
    size_t next = i_;
    const char32_t cp = utf8::Next(p_, next);
    i_ = next;
    return Literal(cp);
  }

  // After a backslash: a character escape (the backslash already consumed).
  char32_t ParseEscapeChar() {
    const char e = p_[i_++];
    switch (e) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case 'a': return '\a';
      case '0': return 0;
      case 'x': {
        char32_t v = 0;
        if (More() && Peek() == '{') {
          ++i_;
          int digits = 0;
          while (More() && std::isxdigit(static_cast<unsigned char>(Peek())) && digits < 8) {
            v = v * 16 + static_cast<char32_t>(std::stoi(std::string(1, p_[i_++]), nullptr, 16));
            ++digits;
          }
          if (!More() || Peek() != '}' || digits == 0 || v > 0x10FFFF) Fail("bad \\x{...} escape");
          ++i_;
          return v;
        }
        for (int k = 0; k < 2; ++k) {
          if (!More() || !std::isxdigit(static_cast<unsigned char>(Peek()))) Fail("bad \\x escape");
          v = v * 16 + static_cast<char32_t>(std::stoi(std::string(1, p_[i_++]), nullptr, 16));
        }
        return v;
      }
      default:
        // As RE2: only ASCII punctuation may be escaped (a non-ASCII byte is not named, so the
        // message stays valid UTF-8).
        if (static_cast<unsigned char>(e) >= 0x80) Fail("invalid escape of a non-ASCII character");
        if (std::isalnum(static_cast<unsigned char>(e))) Fail(StrCat("unsupported escape '\\", e, "'"));
        return static_cast<unsigned char>(e);
    }
  }

  std::unique_ptr<Node> ParseClass() {
    ++i_;  // '['
    auto n = Leaf(Node::kClass);
    if (More() && Peek() == '^') {
      n->cls.negated = true;
      ++i_;
    }
    bool first = true;
    while (true) {
      if (!More()) Fail("missing ']'");
      if (Peek() == ']' && !first) break;
      first = false;
      if (Peek() == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
        const size_t end = p_.find(":]", i_ + 2);
        if (end == std::string::npos) Fail("bad [:class:]");
        AddPosixClass(p_.substr(i_ + 2, end - i_ - 2), n->cls);
        i_ = end + 2;
        continue;
      }
      char32_t lo;
      if (Peek() == '\\') {
        ++i_;
        if (!More()) Fail("trailing backslash");
        const char e = Peek();
        if (e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S') {
          ++i_;
          AddPerlClass(e, n->cls);
          continue;
        }
        lo = ParseEscapeChar();
      } else {
        size_t next = i_;
        lo = utf8::Next(p_, next);
        i_ = next;
      }
      char32_t hi = lo;
      if (i_ + 1 < p_.size() && Peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        if (Peek() == '\\') {
          ++i_;
          if (!More()) Fail("trailing backslash");
          hi = ParseEscapeChar();
        } else {
          size_t next = i_;
          hi = utf8::Next(p_, next);
          i_ = next;
        }
        if (hi < lo) Fail("bad character class range");
      }
      n->cls.ranges.push_back({lo, hi});
      if (fold_case_) {
        for (char32_t c = lo; c <= hi && c - lo < 0x500; ++c) {
          const char32_t a = utf8::ToLower(c), b = utf8::ToUpper(c);
          if (a != c) n->cls.ranges.push_back({a, a});
          if (b != c) n->cls.ranges.push_back({b, b});
        }
      }
    }
    ++i_;  // ']'
    return n;
  }

  void AddPosixClass(const std::string& name, CharClass& cls) {
    auto add = [&](std::initializer_list<Range> rs) { cls.ranges.insert(cls.ranges.end(), rs); };
    if (name == "alpha") add({{'A', 'Z'}, {'a', 'z'}});
    else if (name == "digit") add({{'0', '9'}});
    else if (name == "alnum") add({{'0', '9'}, {'A', 'Z'}, {'a', 'z'}});
    else if (name == "upper") add({{'A', 'Z'}});
    else if (name == "lower") add({{'a', 'z'}});
    else if (name == "space") add({{'\t', '\r'}, {' ', ' '}});
    else if (name == "xdigit") add({{'0', '9'}, {'A', 'F'}, {'a', 'f'}});
    else if (name == "word") add({{'0', '9'}, {'A', 'Z'}, {'a', 'z'}, {'_', '_'}});
    else if (name == "punct") add({{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}});
    else if (name == "blank") add({{'\t', '\t'}, {' ', ' '}});
    else if (name == "cntrl") add({{0, 0x1F}, {0x7F, 0x7F}});
    else if (name == "print") add({{' ', '~'}});
    else if (name == "graph") add({{'!', '~'}});
    else if (name == "ascii") add({{0, 0x7F}});
    else Fail(StrCat("unknown class [:", name, ":]"));
  }

  const std::string& p_;
  const KernelInfo& info_;
  size_t i_ = 0;
  bool fold_case_ = false;
  bool dot_nl_ = false;
};

// The NFA program.
struct Inst {
  enum Op { kClass, kAny, kAnyNl, kSplit, kJmp, kMatch, kBeginText, kEndText, kWordB, kNotWordB };
  Op op;
  int x = 0, y = 0;  // kSplit: both; kJmp: x; kClass: x = class index
};

class Compiler {
 public:
  Compiler(std::vector<Inst>& prog, std::vector<CharClass>& classes, const KernelInfo& info)
      : prog_(prog), classes_(classes), info_(info) {}

  void Emit(const Node& n) {
    if (prog_.size() > kMaxProgram) info_.Fail("pattern too large once its counted repetitions are expanded");
    switch (n.kind) {
      case Node::kEmpty: break;
      case Node::kClass:
        classes_.push_back(n.cls);
        prog_.push_back({Inst::kClass, static_cast<int>(classes_.size()) - 1, 0});
        break;
      case Node::kAny: prog_.push_back({Inst::kAny}); break;
      case Node::kAnyNl: prog_.push_back({Inst::kAnyNl}); break;
      case Node::kBeginText: prog_.push_back({Inst::kBeginText}); break;
      case Node::kEndText: prog_.push_back({Inst::kEndText}); break;
      case Node::kWordB: prog_.push_back({Inst::kWordB}); break;
      case Node::kNotWordB: prog_.push_back({Inst::kNotWordB}); break;
      case Node::kConcat:
        for (const auto& k : n.kids) Emit(*k);
        break;
      case Node::kAlt: {
        std::vector<size_t> jumps;
        for (size_t k = 0; k < n.kids.size(); ++k) {
          if (k + 1 < n.kids.size()) {
            const size_t split = prog_.size();
            prog_.push_back({Inst::kSplit, static_cast<int>(split + 1), 0});
            Emit(*n.kids[k]);
            jumps.push_back(prog_.size());
            prog_.push_back({Inst::kJmp});
            prog_[split].y = static_cast<int>(prog_.size());
          } else {
            Emit(*n.kids[k]);
          }
        }
        for (size_t j : jumps) prog_[j].x = static_cast<int>(prog_.size());
        break;
      }
      case Node::kRepeat: {
        const Node& body = *n.kids[0];
        for (int k = 0; k < n.min; ++k) Emit(body);
        if (n.max < 0) {
          // L: split body_start, out; body; jmp L
          const size_t split = prog_.size();
          prog_.push_back({Inst::kSplit, static_cast<int>(split + 1), 0});
          Emit(body);
          prog_.push_back({Inst::kJmp, static_cast<int>(split), 0});
          prog_[split].y = static_cast<int>(prog_.size());
        } else {
          std::vector<size_t> splits;
          for (int k = n.min; k < n.max; ++k) {
            splits.push_back(prog_.size());
            prog_.push_back({Inst::kSplit, static_cast<int>(prog_.size() + 1), 0});
            Emit(body);
          }
          for (size_t s : splits) prog_[s].y = static_cast<int>(prog_.size());
        }
        break;
      }
    }
  }

 private:
  std::vector<Inst>& prog_;
  std::vector<CharClass>& classes_;
  const KernelInfo& info_;
};

class RegexFullMatch final : public OpKernel {
 public:
  explicit RegexFullMatch(const KernelInfo& info) {
    const std::string pattern = info.GetString("pattern");
    Parser parser(pattern, info);
    const std::unique_ptr<Node> root = parser.Parse();
    Compiler compiler(prog_, classes_, info);
    compiler.Emit(*root);
    prog_.push_back({Inst::kMatch});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() != DataType::kString) ctx.Fail("the input must be a string tensor");
    Tensor& y = ctx.AllocateOutput(0, DataType::kBool, x.shape());
    const std::string* in = x.data<std::string>();
    bool* out = y.data<bool>();
    ThreadPool::For(ctx.thread_pool(), x.size(), 2000.0, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = FullMatch(in[i]);
    });
  }

 private:
  // Pike VM: the set of live program counters advances one code point at a time.
  bool FullMatch(const std::string& s) const {
    std::vector<char32_t> text;
    text.reserve(s.size());
    for (size_t i = 0; i < s.size();) text.push_back(utf8::Next(s, i));
    const size_t n = prog_.size();
    std::vector<int> current, next, stack;
    std::vector<size_t> mark(n, static_cast<size_t>(-1));
    size_t generation = 0;
    // Follows jumps, splits and assertions from pc at text position pos.
    auto add = [&](std::vector<int>& list, int start_pc, size_t pos) {
      stack.push_back(start_pc);
      while (!stack.empty()) {
        const int pc = stack.back();
        stack.pop_back();
        if (mark[pc] == generation) continue;
        mark[pc] = generation;
        const Inst& in = prog_[pc];
        const bool before_word = pos > 0 && IsWordChar(text[pos - 1]);
        const bool after_word = pos < text.size() && IsWordChar(text[pos]);
        switch (in.op) {
          case Inst::kJmp: stack.push_back(in.x); break;
          case Inst::kSplit:
            stack.push_back(in.y);
            stack.push_back(in.x);
            break;
          case Inst::kBeginText:
            if (pos == 0) stack.push_back(pc + 1);
            break;
          case Inst::kEndText:
            if (pos == text.size()) stack.push_back(pc + 1);
            break;
          case Inst::kWordB:
            if (before_word != after_word) stack.push_back(pc + 1);
            break;
          case Inst::kNotWordB:
            if (before_word == after_word) stack.push_back(pc + 1);
            break;
          default: list.push_back(pc);
        }
      }
    };
    add(current, 0, 0);
    for (size_t pos = 0; pos < text.size(); ++pos) {
      if (current.empty()) return false;
      ++generation;
      next.clear();
      const char32_t c = text[pos];
      for (int pc : current) {
        const Inst& in = prog_[pc];
        bool step = false;
        if (in.op == Inst::kClass) step = classes_[in.x].Matches(c);
        else if (in.op == Inst::kAny) step = c != '\n';
        else if (in.op == Inst::kAnyNl) step = true;
        if (step) add(next, pc + 1, pos + 1);
      }
      std::swap(current, next);
    }
    for (int pc : current)
      if (prog_[pc].op == Inst::kMatch) return true;
    return false;
  }

  std::vector<Inst> prog_;
  std::vector<CharClass> classes_;
};

ONYX_CPU_KERNEL("RegexFullMatch", 20, kOpsetMax, RegexFullMatch);

}  // namespace
}  // namespace onyx
