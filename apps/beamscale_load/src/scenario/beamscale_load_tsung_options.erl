%% @doc Tsung's `<options>' that shape the load, read from the file's `<option>' elements: the
%% socket settings of every target, HTTP's User-Agent list, and the typed options a kind's
%% `from_tsung/3' reads. `think' options stay with the think times (`beamscale_load_tsung_xml').
-module(beamscale_load_tsung_options).

-export([kinds/2, timeouts/2, seed/2, sockets/2, tls/2, user_agents/2, agent_var/2, agent_step/2,
         global_number/2]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/2, attr/3, positive_integer/3,
                                   non_negative/3, bool/4, fail/4]).

%% Tsung's `max_retries' when a file does not say (its ts_profile.hrl and tsung.app): a failed
%% connect is tried again 3 times.
-define(TSUNG_MAX_RETRIES, 3).
%% Tsung's other defaults (tsung.app): a reply awaited 10 minutes (`idle_timeout'), a connect 30 s
%% (`connect_timeout'); its `global_ack_timeout' is infinity, beamscale's wait at the barrier
%% 10 minutes (docs/scenario.md, "Timeouts").
-define(TSUNG_IDLE_MS, 600000).
-define(TSUNG_CONNECT_MS, 30000).
-define(GLOBAL_ACK_MS, 600000).
%% The longest wait a timer takes (2^32-1 ms).
-define(MAX_MS, 4294967295).
%% The variable an HTTP session's User-Agent is drawn into.
-define(AGENT_VAR, "beamscale_user_agent").

%% @doc The `<option type="ts_..." name value>'s a kind's `from_tsung/3' reads (ts_amqp's
%% credentials): `{Type, Name, Value}'. Tsung's untyped `bosh_path' and `websocket_path' are
%% ts_jabber's.
-spec kinds([#xmlElement{}], map()) -> [{string(), string(), string()}].
kinds(Opts, _Ctx) ->
    [{T, N, V} || E <- Opts, N <- [attr(E, name)], T <- [kind_type(attr(E, type), N)],
                  V <- [attr(E, value)], T =/= undefined, N =/= undefined, V =/= undefined].

kind_type(undefined, N) when N =:= "bosh_path"; N =:= "websocket_path" -> "ts_jabber";
kind_type(Type, _Name) -> Type.

%% @doc `<option name="idle_timeout" value="MS">' (how long a request's reply is awaited) and
%% `global_ack_timeout' (how long a user waits at the `ack="global"' barrier), or Tsung's
%% defaults.
-spec timeouts([#xmlElement{}], map()) -> #{idle_ms := pos_integer(),
                                            global_ack_ms := pos_integer()}.
timeouts(Opts, Ctx) ->
    maps:from_list([{idle_ms, ?TSUNG_IDLE_MS}, {global_ack_ms, ?GLOBAL_ACK_MS}]
                   ++ [{K, ms(O, Ctx)}
                       || O <- Opts, {Name, K} <- [{"idle_timeout", idle_ms},
                                                   {"global_ack_timeout", global_ack_ms}],
                          attr(O, name) =:= Name, attr(O, type) =:= undefined]).

ms(O, Ctx) ->
    case positive_integer(O, value, Ctx) of
        Ms when Ms =< ?MAX_MS -> Ms;
        _ -> fail(O, Ctx, "<option name=\"~ts\"> value must be at most ~b ms (2^32-1, the "
                          "longest wait)", [attr(O, name), ?MAX_MS])
    end.

%% @doc `<option name="connect_timeout" value="MS">', `tcp_rcv_buffer' and `tcp_snd_buffer'
%% (bytes), `max_retries', `retry_timeout' (ms) and `ports_range': the socket settings of every
%% `host:port' target of the file. Without `max_retries', Tsung's default of 3 retries; without
%% `connect_timeout', Tsung's 30 s.
-spec sockets([#xmlElement{}], map()) -> #{atom() => term()}.
sockets(Opts, Ctx) ->
    %% The file's own values come later in the list: they replace the default.
    maps:from_list([{max_retries, ?TSUNG_MAX_RETRIES}, {connect_timeout_ms, ?TSUNG_CONNECT_MS}]
                   ++ [{K, positive_integer(O, value, Ctx)}
                       || O <- Opts, {Name, K} <- [{"connect_timeout", connect_timeout_ms},
                                                   {"tcp_rcv_buffer", recbuf},
                                                   {"tcp_snd_buffer", sndbuf},
                                                   {"retry_timeout", retry_timeout_ms}],
                          attr(O, name) =:= Name]
                   ++ [{max_retries, non_negative(O, value, Ctx)}
                       || O <- Opts, attr(O, name) =:= "max_retries"]
                   %% Tsung's defaults: 1025 to 65534; value="off" leaves it out.
                   ++ [{ports, {integer_or(O, min, 1025, Ctx), integer_or(O, max, 65534, Ctx)}}
                       || O <- Opts, attr(O, name) =:= "ports_range", attr(O, value) =/= "off"]).

integer_or(O, Name, Default, Ctx) ->
    case attr(O, Name) of
        undefined -> Default;
        _ -> positive_integer(O, Name, Ctx)
    end.

%% @doc `<option name="ssl_versions" value="tlsv1.2">' and `ssl_ciphers' (OpenSSL's names,
%% colon-separated) and `ssl_disable_sni' (true: no server name sent): added to the `tls' of
%% every TLS target of the file.
-spec tls([#xmlElement{}], map()) -> map().
tls(Opts, Ctx) ->
    maps:from_list(
      [{versions, [case lists:member(V, ["tlsv1.3", "tlsv1.2", "tlsv1.1", "tlsv1"]) of
                       true -> list_to_existing_atom(V);
                       false -> fail(O, Ctx, "ssl_versions \"~ts\" (tlsv1.3, tlsv1.2, tlsv1.1 "
                                             "or tlsv1)", [V])
                   end || V <- [string:trim(attr(O, value, ""), both, "' ")]]}
       || O <- Opts, attr(O, name) =:= "ssl_versions"]
      ++ [{ciphers, ciphers(O, Ctx)} || O <- Opts, attr(O, name) =:= "ssl_ciphers"]
      %% Not Tsung 1.7's (later Tsungs'): the handshake without the server's name.
      ++ [{server_name_indication, disable}
          || O <- Opts, attr(O, name) =:= "ssl_disable_sni", bool(O, value, true, Ctx)]).

ciphers(O, Ctx) ->
    C = attr(O, value, ""),
    case beamscale_load_tls:check(#{ciphers => C}) of
        {ok, _} -> C;
        {error, _, Msg} -> fail(O, Ctx, "ssl_ciphers: ~ts", [Msg])
    end.

%% @doc `<option name="seed" value="N">': the seed of the run's random draws (arrivals, think
%% times, choices) when `--seed' does not give one, or `none'. Tsung's generator differs: the
%% same seed draws alike run to run, not as Tsung draws.
-spec seed([#xmlElement{}], map()) -> integer() | none.
seed(Opts, Ctx) ->
    case [O || O <- Opts, attr(O, name) =:= "seed", attr(O, type) =:= undefined] of
        [] -> none;
        [O | _] -> beamscale_load_tsung_dom:integer(O, value, Ctx)
    end.

%% @doc `<option name="global_number" value="N">': how many users meet at Tsung's global
%% barrier (`ack="global"'), or `none'.
-spec global_number([#xmlElement{}], map()) -> pos_integer() | none.
global_number(Opts, Ctx) ->
    case [O || O <- Opts, attr(O, name) =:= "global_number", attr(O, type) =:= undefined] of
        [] -> none;
        [O | _] -> positive_integer(O, value, Ctx)
    end.

%% @doc `<option type="ts_http" name="user_agent">': each HTTP session picks one of its
%% `<user_agent probability>' texts at its start, as Tsung does, into a variable its requests
%% send as User-Agent (without the option they send beamscale's own).
-spec user_agents([#xmlElement{}], map()) -> [{number(), string()}].
user_agents(Opts, Ctx) ->
    lists:append([[{non_negative(U, probability, Ctx), agent(U, Ctx)}
                   || U <- children(O, [user_agent], Ctx), check_attrs(U, Ctx) =:= ok]
                  || O <- Opts, attr(O, name) =:= "user_agent"]).

%% The text as a header's value: the element's indentation around it dropped (Tsung's examples
%% put it on a line of its own), a line break inside refused at its line.
agent(U, Ctx) ->
    Text = string:trim(beamscale_load_tsung_request:text(U), both, " \t\r\n"),
    [fail(U, Ctx, "<user_agent> holds a line break: it would split the request", [])
     || lists:member($\r, Text) orelse lists:member($\n, Text)],
    Text.

%% @doc The context a session's requests are read in: those of a kind that reads the
%% `user_agent' option (its `tsung/0''s `options': HTTP's) send the drawn User-Agent.
-spec agent_var(module(), map()) -> map().
agent_var(Mod, #{user_agents := [_ | _]} = Ctx) ->
    case reads_agents(Mod) of
        true -> Ctx#{user_agent_var => ?AGENT_VAR};
        false -> Ctx
    end;
agent_var(_, Ctx) -> Ctx.

%% @doc The step that draws a session's User-Agent, first in it.
-spec agent_step(module(), map()) -> [tuple()].
agent_step(Mod, #{user_agents := [_ | _] = L}) ->
    [{setvars, [?AGENT_VAR], {choice, [{W, T} || {W, T} <- L, W > 0]}} || reads_agents(Mod)];
agent_step(_, _) -> [].

reads_agents(Mod) ->
    case beamscale_load_kinds:tsung(Mod) of
        #{options := Os} -> lists:member("user_agent", Os);
        _ -> false
    end.
