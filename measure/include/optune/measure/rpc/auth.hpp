// The token handshake every RPC connection begins with. The listening side (server, tracker,
// proxy) sends a challenge with a fresh random nonce; the connecting side answers with
// HMAC-SHA256(token, "connector:" + nonce) and a nonce of its own, so the token itself never
// crosses the wire, and the listener accepts or refuses before any other message (and so any
// upload) is read. The listener's welcome proves in turn that it holds the token
// (HMAC(token, "listener:" + the connector's nonce)): a client with a token never sends
// candidates to, or takes results from, an impostor. A listener without a token accepts everyone
// (the command line allows that on loopback only). Traffic is not encrypted: across untrusted
// networks, run it inside a VPN or SSH tunnel.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "optune/measure/rpc/channel.hpp"

namespace optune::measure::rpc {

// The peer refused our token, or we refused the peer's. Not worth a retry.
class AuthenticationError : public TransportError {
 public:
  using TransportError::TransportError;
};

// A shared secret. Kept out of every log line, message and record: only its HMACs are sent.
struct Token {
  std::string secret;  // empty: none
  bool empty() const { return secret.empty(); }
};
// Reads a token file (surrounding whitespace dropped); throws std::invalid_argument when the
// file is missing or empty. Never puts the contents into an error message.
Token read_token_file(const std::string& path);

// HMAC-SHA256 of `message` under `token`, lower-case hex.
std::string hmac_sha256_hex(const Token& token, const std::string& message);

// A listener at its limit of sessions, told to a peer that proved the token in place of the welcome.
class ServiceBusy : public TransportError {
 public:
  using TransportError::TransportError;
};

inline constexpr double kHandshakeTimeoutSeconds = 10;
// The listener's side is shorter, and one deadline for the whole exchange (a few small frames):
// a connection that has not proved the token holds its place no longer.
inline constexpr double kAcceptHandshakeTimeoutSeconds = 5;

// Listener side: challenge, check the answer, call `admit` (Admission::admit: a session slot, or
// ServiceBusy), send the welcome (with `welcome` metadata, e.g. a server's device) and return the
// connector's metadata (its role, ...). Throws AuthenticationError (after telling the peer) on a
// wrong or missing token, ServiceBusy (after telling the peer) when `admit` finds no slot.
nlohmann::json accept_handshake(Channel& channel, const Token& token, const std::string& listener_role,
                                const std::function<void()>& admit, nlohmann::json welcome = nlohmann::json::object());

// Connector side: answer the challenge with `metadata` (e.g. {"role": "client"}) and wait for the
// welcome, whose metadata is returned. Throws AuthenticationError when refused, or when we hold
// a token and the listener cannot prove it holds it too.
nlohmann::json connect_handshake(Channel& channel, const Token& token, nlohmann::json metadata);

}  // namespace optune::measure::rpc
