// tensor/random.cpp - uniform, normal and integer draws from a 64-bit Mersenne Twister.
#include "tensor/random.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "tensor/check.h"

namespace seqgrad {

double Generator::uniform() {
  // The top 53 bits, scaled by 2^-53: every double in [0, 1) on a grid of 2^-53.
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double Generator::normal() {
  // Box-Muller: two uniforms u1 in (0, 1], u2 in [0, 1) give two independent normals
  //   z0 = sqrt(-2 ln u1) cos(2 pi u2),  z1 = sqrt(-2 ln u1) sin(2 pi u2).
  // We return z0 now and keep z1 for the next call.
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_normal_ = r * std::sin(theta);
  has_spare_normal_ = true;
  return r * std::cos(theta);
}

uint64_t Generator::randint(uint64_t n) {
  // Rejection sampling removes the bias of a plain `x % n`.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return x % n;
}

// "<the engine's words> <1 if a normal is kept> <its bits>": decimal integers only, so the text
// round-trips exactly on any platform.
std::string Generator::state() const {
  uint64_t spare_bits;
  std::memcpy(&spare_bits, &spare_normal_, sizeof spare_bits);
  std::ostringstream os;
  os << engine_ << ' ' << (has_spare_normal_ ? 1 : 0) << ' ' << spare_bits;
  return os.str();
}

void Generator::set_state(const std::string& state) {
  std::istringstream is(state);
  std::mt19937_64 engine;
  int has_spare = -1;
  uint64_t spare_bits = 0;
  is >> engine >> has_spare >> spare_bits;
  std::string rest;
  check_state(!is.fail() && (has_spare == 0 || has_spare == 1) && !(is >> rest),
              "Generator::set_state: expected the text of Generator::state(), got '",
              state.size() <= 40 ? state : state.substr(0, 37) + "...", "'");
  engine_ = engine;
  has_spare_normal_ = has_spare == 1;
  std::memcpy(&spare_normal_, &spare_bits, sizeof spare_bits);
}

namespace {
thread_local Generator* tls_generator = nullptr;  // the innermost GeneratorScope's, or none
}  // namespace

Generator& default_generator() {
  static Generator generator;
  return tls_generator ? *tls_generator : generator;
}

GeneratorScope::GeneratorScope(Generator& g) : previous_(tls_generator) { tls_generator = &g; }
GeneratorScope::~GeneratorScope() { tls_generator = previous_; }

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace seqgrad
