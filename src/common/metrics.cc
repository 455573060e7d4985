#include "common/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <variant>

#include "common/check.h"
#include "common/limits.h"

namespace tessera::metrics {
namespace {

bool ValidName(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                       (allow_colon && c == ':');
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

// Prometheus float syntax: shortest round-trip decimal, +Inf, -Inf, NaN.
std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  TESSERA_CHECK(ec == std::errc());
  return std::string(buf, end);
}

void AppendEscaped(std::string& out, std::string_view text, bool escape_quote) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// `a="1",b="2"`, sorted by label name: the series' identity and its text.
std::string CanonicalLabels(Labels labels) {
  std::sort(labels.begin(), labels.end());
  std::string out;
  for (size_t i = 0; i < labels.size(); ++i) {
    TESSERA_CHECK(ValidName(labels[i].first, /*allow_colon=*/false));
    TESSERA_CHECK(labels[i].first != "le");  // reserved for histogram buckets
    TESSERA_CHECK(i == 0 || labels[i].first != labels[i - 1].first);
    if (i > 0) out += ',';
    out += labels[i].first;
    out += "=\"";
    AppendEscaped(out, labels[i].second, /*escape_quote=*/true);
    out += '"';
  }
  return out;
}

// `name{labels}` or `name{labels,extra}`; braces omitted when both empty.
std::string SeriesName(std::string_view name, std::string_view labels, std::string_view extra) {
  std::string out(name);
  if (labels.empty() && extra.empty()) return out;
  out += '{';
  out += labels;
  if (!labels.empty() && !extra.empty()) out += ',';
  out += extra;
  out += '}';
  return out;
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      counts_(new std::atomic<uint64_t>[upper_bounds_.size() + 1]) {
  TESSERA_CHECK(!upper_bounds_.empty() && upper_bounds_.size() <= limits::kHistogramBucketsMax);
  for (size_t i = 0; i < upper_bounds_.size(); ++i) {
    TESSERA_CHECK(std::isfinite(upper_bounds_[i]));
    TESSERA_CHECK(i == 0 || upper_bounds_[i - 1] < upper_bounds_[i]);
  }
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) counts_[i].store(0);
}

void Histogram::Observe(double v) {
  const auto it = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), v);
  counts_[static_cast<size_t>(it - upper_bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bucket_counts.resize(upper_bounds_.size() + 1);
  for (size_t i = 0; i < s.bucket_counts.size(); ++i) {
    s.bucket_counts[i] = counts_[i].load(std::memory_order_relaxed);
    s.count += s.bucket_counts[i];
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

std::vector<double> ExponentialBuckets(double start, double factor, size_t count) {
  TESSERA_CHECK(start > 0 && factor > 1 && count >= 1);
  std::vector<double> bounds;
  bounds.reserve(count);
  double bound = start;
  for (size_t i = 0; i < count; ++i) {
    bounds.push_back(bound);
    bound *= factor;
  }
  return bounds;
}

const std::vector<double>& LatencyBucketsSeconds() {
  static const std::vector<double> kBuckets = ExponentialBuckets(50e-6, 2, 19);
  return kBuckets;
}

struct Registry::Series {
  std::string labels;  // canonical text
  std::variant<Counter, Gauge, std::unique_ptr<Histogram>> instrument;
};

struct Registry::Family {
  Type type;
  std::string help;
  std::vector<double> upper_bounds;  // histograms only
  std::map<std::string, std::unique_ptr<Series>, std::less<>> series;  // by labels
};

Registry::Registry() = default;
Registry::~Registry() = default;

Registry::Series& Registry::GetSeries(std::string_view name, std::string_view help, Type type,
                                      const std::vector<double>* upper_bounds,
                                      const Labels& labels) {
  TESSERA_CHECK(ValidName(name, /*allow_colon=*/true));
  std::string label_text = CanonicalLabels(labels);
  std::lock_guard lock(mu_);
  auto family_it = families_.find(name);
  if (family_it == families_.end()) {
    auto family = std::make_unique<Family>();
    family->type = type;
    family->help = std::string(help);
    if (upper_bounds != nullptr) family->upper_bounds = *upper_bounds;
    family_it = families_.emplace(std::string(name), std::move(family)).first;
  }
  Family& family = *family_it->second;
  TESSERA_CHECK(family.type == type && family.help == help);
  TESSERA_CHECK(upper_bounds == nullptr || family.upper_bounds == *upper_bounds);
  auto series_it = family.series.find(label_text);
  if (series_it != family.series.end()) return *series_it->second;

  TESSERA_CHECK(series_count_ < limits::kMetricSeriesMax);
  ++series_count_;
  auto series = std::make_unique<Series>();
  series->labels = label_text;
  if (type == Type::kGauge) series->instrument.emplace<Gauge>();
  if (type == Type::kHistogram) {
    series->instrument.emplace<std::unique_ptr<Histogram>>(
        std::make_unique<Histogram>(family.upper_bounds));
  }
  return *family.series.emplace(std::move(label_text), std::move(series)).first->second;
}

Counter& Registry::GetCounter(std::string_view name, std::string_view help, const Labels& labels) {
  return std::get<Counter>(GetSeries(name, help, Type::kCounter, nullptr, labels).instrument);
}

Gauge& Registry::GetGauge(std::string_view name, std::string_view help, const Labels& labels) {
  return std::get<Gauge>(GetSeries(name, help, Type::kGauge, nullptr, labels).instrument);
}

Histogram& Registry::GetHistogram(std::string_view name, std::string_view help,
                                  const std::vector<double>& upper_bounds, const Labels& labels) {
  auto& instrument =
      GetSeries(name, help, Type::kHistogram, &upper_bounds, labels).instrument;
  return *std::get<std::unique_ptr<Histogram>>(instrument);
}

namespace {

void RenderHistogram(std::string& out, const std::string& name, const std::string& labels,
                     const Histogram& histogram) {
  const Histogram::Snapshot s = histogram.snapshot();
  const std::vector<double>& bounds = histogram.upper_bounds();
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += s.bucket_counts[i];
    const std::string le =
        "le=\"" + (i < bounds.size() ? FormatDouble(bounds[i]) : std::string("+Inf")) + "\"";
    out += SeriesName(name + "_bucket", labels, le) + " " + std::to_string(cumulative) + "\n";
  }
  out += SeriesName(name + "_sum", labels, "") + " " + FormatDouble(s.sum) + "\n";
  out += SeriesName(name + "_count", labels, "") + " " + std::to_string(s.count) + "\n";
}

}  // namespace

std::string Registry::RenderText() const {
  static constexpr const char* kTypeNames[] = {"counter", "gauge", "histogram"};
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& [name, family] : families_) {
    out += "# HELP " + name + " ";
    AppendEscaped(out, family->help, /*escape_quote=*/false);
    out += "\n# TYPE " + name + " " + kTypeNames[static_cast<int>(family->type)] + "\n";
    for (const auto& [labels, series] : family->series) {
      if (const auto* counter = std::get_if<Counter>(&series->instrument)) {
        out += SeriesName(name, labels, "") + " " + std::to_string(counter->value()) + "\n";
      } else if (const auto* gauge = std::get_if<Gauge>(&series->instrument)) {
        out += SeriesName(name, labels, "") + " " + FormatDouble(gauge->value()) + "\n";
      } else {
        RenderHistogram(out, name, labels,
                        *std::get<std::unique_ptr<Histogram>>(series->instrument));
      }
    }
  }
  return out;
}

}  // namespace tessera::metrics
