%% @private Tsung's elements that change a session midway, read for `beamscale_load_tsung_xml'
%% (docs/scenario.md, "Tsung XML"): `<set_option>' (the socket settings or the client
%% certificate of what follows), `<interaction>' (the time from one user's send to another's
%% receive) and `<change_type>' (the requests that follow are of another type, to another
%% server). Errors are thrown at the element's line as `beamscale_load_tsung_dom' throws them.
-module(beamscale_load_tsung_mid).

-export([set_option/2, interaction/2, change_type/2]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/2, req/3, integer/3,
                                   positive_integer/3, bool/4, fail/4]).

%% The certificate's attributes and the keys of a terms `set_option''s `certificate'.
-define(CERT_KEYS, [{certfile, certfile}, {keyfile, keyfile}, {keypass, password},
                    {cacertfile, cacertfile}]).

%% @doc `<set_option name value>': a `{set_option, Options}' step. Tsung 1.7 reads
%% `connect_timeout' and `certificate' (`rate_limit' is refused); `retry_timeout' and
%% `max_retries', which its manual shows, are taken too.
-spec set_option(#xmlElement{}, map()) -> {{set_option, map()}, []}.
set_option(E, Ctx) ->
    check_attrs(E, Ctx),
    Opts = case req(E, name, Ctx) of
               "connect_timeout" -> #{connect_timeout_ms => positive_integer(E, value, Ctx)};
               "retry_timeout" -> #{retry_timeout_ms => positive_integer(E, value, Ctx)};
               "max_retries" -> #{max_retries => integer(E, value, Ctx)};
               "certificate" -> #{certificate => certificate(E, Ctx)};
               "rate_limit" ->
                   fail(E, Ctx, "<set_option name=\"rate_limit\"> is not supported: beamscale "
                                "does not limit a user's incoming bandwidth", []);
               N -> fail(E, Ctx, "<set_option name=\"~ts\"> (connect_timeout, retry_timeout, "
                                 "max_retries or certificate)", [N])
           end,
    {{set_option, Opts}, []}.

%% `<certificate certfile keyfile keypass cacertfile>': files as written (relative to the XML
%% file's directory), each checked to be there; Tsung's `%%_name%%' in them is refused.
certificate(E, Ctx) ->
    case children(E, [certificate], Ctx) of
        [C] ->
            check_attrs(C, Ctx),
            maps:from_list([{Key, cert_value(C, A, Ctx)} || {A, Key} <- ?CERT_KEYS,
                                                            attr(C, A) =/= undefined]);
        _ -> fail(E, Ctx, "<set_option name=\"certificate\"> needs one <certificate>", [])
    end.

cert_value(C, A, Ctx) ->
    V = attr(C, A),
    [fail(C, Ctx, "~ts=\"~ts\": a fixed value (no %%_name%%) is expected", [A, V])
     || string:find(V, "%%") =/= nomatch],
    case A of
        keypass -> V;
        _ ->
            Path = filename:absname(V, filename:dirname(filename:absname(maps:get(file, Ctx)))),
            [fail(C, Ctx, "~ts=\"~ts\": no such file (~ts)", [A, V, Path])
             || not filelib:is_regular(Path)],
            Path
    end.

%% @doc `<interaction action="send|receive" id>': the time from a user's `send' to another's
%% `receive' of the same id, a transaction named `tr_ID' as Tsung names it.
-spec interaction(#xmlElement{}, map()) -> {{interaction, send | 'receive', binary()}, []}.
interaction(E, Ctx) ->
    check_attrs(E, Ctx),
    Action = case req(E, action, Ctx) of
                 "send" -> send;
                 "receive" -> 'receive';
                 A -> fail(E, Ctx, "action=\"~ts\" (send or receive)", [A])
             end,
    Id = req(E, id, Ctx),
    [fail(E, Ctx, "id=\"~ts\": a fixed id (no %%_name%%) is expected", [Id])
     || string:find(Id, "%%") =/= nomatch],
    {{interaction, Action, unicode:characters_to_binary("tr_" ++ Id)}, []}.

%% @doc `<change_type new_type host port server_type store restore>': the steps that close
%% connections (`store="false"': the current type's; `restore="false"': the new type's, so
%% that it connects anew) and the context the following requests are read in.
-spec change_type(#xmlElement{}, map()) -> {{{steps, list()}, []}, map()}.
change_type(E, #{type := Old} = Ctx) ->
    check_attrs(E, Ctx),
    New = case beamscale_load_kinds:by_tsung_type(req(E, new_type, Ctx)) of
              {ok, Mod} -> Mod;
              error -> fail(E, Ctx, "new_type=\"~ts\" is not supported (~ts)",
                            [req(E, new_type, Ctx),
                             lists:join(", ", beamscale_load_kinds:tsung_types())])
          end,
    [fail(E, Ctx, "~ts=\"~ts\": a fixed value (no %%_name%%) is expected", [A, V])
     || A <- [host, port], V <- [req(E, A, Ctx)], string:find(V, "%%") =/= nomatch],
    [fail(E, Ctx, "bidi=\"true\" on <change_type> is not supported (give it on <session>)", [])
     || bool(E, bidi, false, Ctx)],
    Port = positive_integer(E, port, Ctx),
    [fail(E, Ctx, "port=\"~b\": from 1 to 65535", [Port]) || Port > 65535],
    Server = {E, req(E, host, Ctx), Port, server_type(E, Ctx)},
    Close = [Old || not bool(E, store, false, Ctx)] ++ [New || not bool(E, restore, false, Ctx)],
    Main = maps:get(main_servers, Ctx, maps:get(servers, Ctx)),
    {{{steps, [{disconnect, M:name()} || M <- lists:usort(Close)]}, []},
     Ctx#{type => New, servers => [Server], main_servers => Main,
          server_name => server_name(Server, Main)}}.

%% Tsung's `server_type' names its protocol module: gen_tcp, ssl, gen_udp (or tcp, ssl, udp).
server_type(E, Ctx) ->
    case req(E, server_type, Ctx) of
        T when T =:= "tcp"; T =:= "gen_tcp"; T =:= "tcp6"; T =:= "gen_tcp6" -> "tcp";
        T when T =:= "ssl"; T =:= "ssl6" -> "ssl";
        T when T =:= "udp"; T =:= "gen_udp"; T =:= "udp6"; T =:= "gen_udp6" -> "udp";
        T -> fail(E, Ctx, "server_type=\"~ts\" (tcp, ssl or udp)", [T])
    end.

%% The target name of a `<change_type>''s server: `server' for the file's own `<server>',
%% else `server_PORT' (one of 65535 names, not one per input).
server_name({_, Host, Port, Type}, [{_, Host, Port, Type}]) -> server;
server_name({_, _, Port, _}, _Main) -> list_to_atom("server_" ++ integer_to_list(Port)).
