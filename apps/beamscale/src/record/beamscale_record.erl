%% @doc `beamscale record': an HTTP proxy on 127.0.0.1 that passes a browser's requests on to
%% their servers and writes what passed as a scenario (docs/record.md): after each request the
%% whole Tsung XML file and terms file are rewritten (`beamscale_record_write', pure), so a
%% recording stopped at any time is complete up to its last request. HTTPS through `CONNECT',
%% with certificates per host signed by its CA (`beamscale_record_ca', kept in `ca_dir'); each
%% connection is served by `beamscale_record_conn'; 256 connections at once, the one idle the
%% longest let go for a new one when all are taken (so idle connections never lock the browser
%% out).
-module(beamscale_record).

-export([start/1, stop/1, port/1, ca/1, cert/2]).
-export_type([opts/0]).

-type opts() :: #{port := inet:port_number(), base := file:filename(),
                  ca_dir => file:filename(), handshake_ms => timeout(),
                  body_ms => pos_integer(), reply_ms => pos_integer()}.

-define(MAX_CONNS, 256).
-define(MAX_CERTS, 1000).
%% A browser that CONNECTs and then sends nothing (or TLS too slowly) is let go after this.
-define(HANDSHAKE_MS, 10000).
%% A chunked request body is all sent within this.
-define(BODY_MS, 30000).
%% A reply passes whole within this from its request's start (`beamscale_record_conn').
-define(REPLY_MS, 300000).

%% @doc Start the proxy on 127.0.0.1:`port' (0: any), writing `base'.xml and `base'.scenario,
%% its CA in `ca_dir' (by default beside `base'), made there by the first recording.
-spec start(opts()) -> {ok, pid()} | {error, term()}.
start(#{port := Port, base := Base} = Opts) ->
    Me = self(),
    {ok, _} = application:ensure_all_started(ssl),
    Ca = maps:get(ca_dir, Opts, filename:dirname(filename:absname(Base))),
    Ctx = #{handshake_ms => maps:get(handshake_ms, Opts, ?HANDSHAKE_MS),
            body_ms => maps:get(body_ms, Opts, ?BODY_MS),
            reply_ms => maps:get(reply_ms, Opts, ?REPLY_MS)},
    Pid = spawn(fun() -> init(Me, Port, Base, Ca, Ctx) end),
    receive
        {Pid, Result} -> Result
    after 5000 -> exit(Pid, kill), {error, timeout}
    end.

%% @doc The port it listens on.
-spec port(pid()) -> inet:port_number().
port(Pid) -> call(Pid, port).

%% @doc Its certificate authority (how to trust it: `beamscale_record_ca:trust_text/1').
-spec ca(pid()) -> beamscale_record_ca:ca().
ca(Pid) -> call(Pid, ca).

%% @doc The certificate chain and key for `Host', issued once per host by the proxy `Pid'.
-spec cert(pid(), string()) -> {[public_key:der_encoded()], {'ECPrivateKey', binary()}}.
cert(Pid, Host) -> call(Pid, {cert, Host}).

%% @doc Stop it; the files hold every request recorded. Returns how many.
-spec stop(pid()) -> non_neg_integer().
stop(Pid) -> call(Pid, stop).

call(Pid, Req) ->
    Ref = monitor(process, Pid),
    Pid ! {Req, self(), Ref},
    receive
        {Ref, Reply} -> demonitor(Ref, [flush]), Reply
    end.

init(Parent, Port, Base, CaDir, Ctx) ->
    case {beamscale_record_ca:open(CaDir),
          gen_tcp:listen(Port, [binary, {ip, {127, 0, 0, 1}}, {active, false},
                                {reuseaddr, true}, {packet, raw}, {backlog, 4096}])} of
        {{ok, Ca}, {ok, L}} ->
            Parent ! {self(), {ok, self()}},
            Me = self(),
            spawn_link(fun() -> accept(L, Me, beamscale_peer:new()) end),
            loop(#{listen => L, base => Base, reqs => [], conns => #{}, idle => gb_sets:empty(),
                   seq => 0, ca => Ca, certs => #{},
                   ctx => Ctx#{owner => Me, cert => fun(Host) -> cert(Me, Host) end}});
        {{error, Why}, _} -> Parent ! {self(), {error, Why}};
        {_, {error, Why}} -> Parent ! {self(), {error, {listen, Why}}}
    end.

loop(#{listen := L, reqs := Reqs} = S) ->
    receive
        {accepted, Sock} -> loop(accepted(Sock, S));
        {busy, Pid} -> loop(busy(Pid, S));
        {'DOWN', _, process, Pid, _} -> loop(gone(Pid, S));
        {request, At, R, From, Ref} ->
            Reqs1 = [R#{at => At} | Reqs],
            ok = write(S#{reqs := Reqs1}),
            From ! {Ref, recorded},
            loop(S#{reqs := Reqs1});
        {{cert, Host}, From, Ref} ->
            {Cert, S1} = cert_for(Host, S),
            From ! {Ref, Cert},
            loop(S1);
        %% A reply cut at its whole-reply bound: said where the recording was started.
        {cut, Text} -> io:format("~ts~n", [Text]), loop(S);
        {ca, From, Ref} -> From ! {Ref, maps:get(ca, S)}, loop(S);
        {port, From, Ref} -> {ok, P} = inet:port(L), From ! {Ref, P}, loop(S);
        {stop, From, Ref} -> gen_tcp:close(L), From ! {Ref, length(Reqs)}
    end.

%% A connection is idle (in `idle', by accept order) until it has read a request to pass on.
accepted(Sock, #{conns := Conns} = S) when map_size(Conns) < ?MAX_CONNS -> serve(Sock, S);
accepted(Sock, #{idle := Idle} = S) ->
    case gb_sets:is_empty(Idle) of
        true -> gen_tcp:close(Sock), S;
        false ->
            {{_, Oldest}, _} = gb_sets:take_smallest(Idle),
            exit(Oldest, kill),
            serve(Sock, gone(Oldest, S))
    end.

serve(Sock, #{conns := Conns, idle := Idle, seq := Seq, ctx := Ctx} = S) ->
    Pid = spawn(fun() -> receive go -> beamscale_record_conn:serve(Sock, Ctx) end end),
    ok = gen_tcp:controlling_process(Sock, Pid),
    Ref = monitor(process, Pid),
    Pid ! go,
    S#{conns := Conns#{Pid => {Seq, Ref}}, idle := gb_sets:add({Seq, Pid}, Idle), seq := Seq + 1}.

busy(Pid, #{conns := Conns, idle := Idle} = S) ->
    case Conns of
        #{Pid := {Seq, _}} -> S#{idle := gb_sets:del_element({Seq, Pid}, Idle)};
        _ -> S
    end.

gone(Pid, #{conns := Conns, idle := Idle} = S) ->
    case maps:take(Pid, Conns) of
        {{Seq, Ref}, Conns1} ->
            demonitor(Ref, [flush]),
            S#{conns := Conns1, idle := gb_sets:del_element({Seq, Pid}, Idle)};
        error -> S
    end.

%% Answered as the proxy refuses any request (the client's bytes read before the close, so the
%% 403 is not reset away), by a process of its own: the acceptor goes on at once.
refuse(Sock, Why) ->
    Text = beamscale_peer:format_error(Why),
    Pid = spawn(fun() -> receive go -> beamscale_record_conn:refuse({gen_tcp, Sock}, 403, Text)
                         end
                end),
    ok = gen_tcp:controlling_process(Sock, Pid),
    Pid ! go.

%% A host's certificate is made at its first CONNECT and kept (up to ?MAX_CERTS hosts: past
%% that the kept ones are dropped, a browser naming ever new hosts costs only signatures).
cert_for(Host, #{certs := Certs, ca := Ca} = S) ->
    case Certs of
        #{Host := Cert} -> {Cert, S};
        _ ->
            Cert = beamscale_record_ca:issue(Host, Ca),
            Kept = case map_size(Certs) >= ?MAX_CERTS of true -> #{}; false -> Certs end,
            {Cert, S#{certs := Kept#{Host => Cert}}}
    end.

write(#{base := Base, reqs := Reqs}) ->
    Recorded = lists:reverse(Reqs),
    ok = beamscale_store:write_file(Base ++ ".xml", beamscale_record_write:tsung(Recorded)),
    beamscale_store:write_file(Base ++ ".scenario", beamscale_record_write:terms(Recorded)).

%% Only the recording user's connections are served (`beamscale_peer'): another local user's
%% requests would reach their targets through it and land in the owner's recording. Theirs are
%% told in the acceptor and refused at once (`refuse/2'), holding no slot.
accept(L, Owner, Peers) ->
    case gen_tcp:accept(L) of
        {ok, Sock} ->
            case beamscale_peer:owner(Sock, Peers) of
                {ok, Peers1} ->
                    ok = gen_tcp:controlling_process(Sock, Owner),
                    Owner ! {accepted, Sock};
                {{error, Why}, Peers1} -> refuse(Sock, Why)
            end,
            accept(L, Owner, Peers1);
        {error, closed} -> ok
    end.
