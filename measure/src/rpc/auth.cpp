#include "optune/measure/rpc/auth.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace optune::measure::rpc {
namespace {

constexpr const char* kAuthErrorCode = "authentication";

std::string to_hex(const unsigned char* bytes, std::size_t size) {
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (std::size_t i = 0; i < size; ++i) {
    hex.push_back(digits[bytes[i] >> 4]);
    hex.push_back(digits[bytes[i] & 0xf]);
  }
  return hex;
}

std::string random_nonce() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("OpenSSL RAND_bytes failed");
  return to_hex(bytes, sizeof bytes);
}

void refuse(Channel& channel, const std::string& message) {
  try {
    channel.send({MessageType::kError, {{"message", message}, {"code", kAuthErrorCode}}, {}},
                 Channel::Seconds(2));
  } catch (...) {
  }
  channel.close();
  throw AuthenticationError(message);
}

}  // namespace

Token read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read token file " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::string secret = text.str();
  auto begin = secret.find_first_not_of(" \t\r\n");
  auto end = secret.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) throw std::invalid_argument("token file " + path + " is empty");
  return Token{secret.substr(begin, end - begin + 1)};
}

std::string hmac_sha256_hex(const Token& token, const std::string& message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), token.secret.data(), static_cast<int>(token.secret.size()),
            reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &size))
    throw std::runtime_error("OpenSSL HMAC failed");
  return to_hex(digest, size);
}

nlohmann::json accept_handshake(Channel& channel, const Token& token, const std::string& listener_role,
                                const std::function<void()>& admit, nlohmann::json welcome) {
  const std::string nonce = random_nonce();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            Channel::Seconds(kAcceptHandshakeTimeoutSeconds));
  const auto left = [&] {
    return std::max(Channel::Seconds(0.001), Channel::Seconds(deadline - std::chrono::steady_clock::now()));
  };
  channel.send({MessageType::kChallenge,
                {{"nonce", nonce}, {"token_required", !token.empty()}, {"role", listener_role}},
                {}},
               left());
  // Nothing but the answer is read before the peer is known: no payload bytes at all.
  channel.set_max_payload_bytes(0);
  Frame answer = expect(channel, MessageType::kAuthenticate, left());
  channel.set_max_payload_bytes(kDefaultMaxPayloadBytes);
  if (!token.empty()) {
    const auto* mac = answer.metadata.contains("mac") ? answer.metadata["mac"].get_ptr<const std::string*>() : nullptr;
    const std::string expected = hmac_sha256_hex(token, "connector:" + nonce);
    if (!mac || mac->size() != expected.size() || CRYPTO_memcmp(mac->data(), expected.data(), expected.size()) != 0)
      refuse(channel, mac && !mac->empty() ? "authentication failed: wrong token"
                                           : "authentication failed: this " + listener_role + " requires a token");
    welcome["proof"] = hmac_sha256_hex(token, "listener:" + answer.metadata.value("nonce", std::string()));
  }
  try {
    if (admit) admit();
  } catch (const ServiceBusy& busy) {
    channel.send_error(busy.what());
    channel.close();
    throw;
  }
  channel.send({MessageType::kWelcome, std::move(welcome), {}}, Channel::Seconds(kHandshakeTimeoutSeconds));
  return answer.metadata;
}

nlohmann::json connect_handshake(Channel& channel, const Token& token, nlohmann::json metadata) {
  const Channel::Seconds timeout(kHandshakeTimeoutSeconds);
  const std::string peer = channel.peer();
  Frame challenge = expect(channel, MessageType::kChallenge, timeout);
  const std::string role = challenge.metadata.value("role", std::string("peer"));
  if (challenge.metadata.value("token_required", false) && token.empty()) {
    channel.close();
    throw AuthenticationError("the " + role + " at " + peer + " requires a token (--token-file)");
  }
  const std::string nonce = random_nonce();
  metadata["nonce"] = nonce;
  metadata["mac"] = token.empty() ? "" : hmac_sha256_hex(token, "connector:" + challenge.metadata.value("nonce", std::string()));
  channel.send({MessageType::kAuthenticate, std::move(metadata), {}}, timeout);
  Frame reply = channel.receive(timeout);
  if (reply.type == MessageType::kWelcome) {
    if (token.empty()) return reply.metadata;
    const std::string expected = hmac_sha256_hex(token, "listener:" + nonce);
    const std::string proof = reply.metadata.value("proof", std::string());
    if (proof.size() != expected.size() || CRYPTO_memcmp(proof.data(), expected.data(), expected.size()) != 0) {
      channel.close();
      throw AuthenticationError("the " + role + " at " + peer + " does not hold our token (no valid proof)");
    }
    return reply.metadata;
  }
  std::string message = reply.metadata.value("message", std::string("no welcome"));
  if (reply.type == MessageType::kError && reply.metadata.value("code", "") == kAuthErrorCode)
    throw AuthenticationError("the " + role + " refused us: " + message);
  throw TransportError("handshake with the " + role + ": " + message);
}

}  // namespace optune::measure::rpc
