%% @private Reading a Tsung xmerl tree for `beamscale_load_tsung_xml': which attributes each
%% element may have and which are ignored settings, children checked against what is allowed,
%% typed attribute values, and errors `{tsung, Line, Message}' thrown at an element's line.
-module(beamscale_load_tsung_dom).

-export([ignored/1, children/3, check_attrs/2, attr/2, attr/3, req/3, number/3, integer/3,
         positive_integer/3, positive/3, non_negative/3, bool/4, line/2, fail/4]).
-export([type/3, status/2]).

-include_lib("xmerl/include/xmerl.hrl").

%% The request elements of Tsung's DTD (its vocabulary, not beamscale's kinds: which of them a
%% kind reads is the registry's to say).
-define(TSUNG_REQUESTS, [http, jabber, raw, pgsql, mysql, ldap, fs, shell, job, websocket,
                         amqp, mqtt, tcp, udp]).

-type ctx() :: #{lines := beamscale_load_tsung_xml:lines(), atom() => term()}.

%% @doc The settings of the tree that do not change the load sent (one text per kind, sorted).
-spec ignored(#xmlElement{}) -> [string()].
ignored(Root) -> lists:usort(ign(Root)).

ign(#xmlElement{name = option} = E) ->
    V = attr(E, value, "true"),
    case {attr(E, name), attr(E, type)} of
        {"thinktime", undefined} -> [];
        {"file_server", _} -> [];
        {"user_agent", _} -> [];
        {N, _} when N =:= "connect_timeout"; N =:= "tcp_rcv_buffer"; N =:= "tcp_snd_buffer" -> [];
        {"global_number", undefined} -> [];
        {N, undefined} when N =:= "bosh_path"; N =:= "websocket_path" -> [];
        {N, undefined} when N =:= "max_retries"; N =:= "retry_timeout"; N =:= "ports_range" ->
            [];
        {N, undefined} when N =:= "ssl_versions"; N =:= "ssl_ciphers" -> [];
        {N, undefined} when N =:= "idle_timeout"; N =:= "global_ack_timeout" -> [];
        {"ssl_disable_sni", undefined} -> [];
        %% Tsung's default, and beamscale's way: each user resumes its TLS session.
        {"ssl_reuse_sessions", undefined} when V =:= "true" -> [];
        {"seed", undefined} -> [];
        {N, T} when N =:= "rate_limit", T =:= undefined;
                    N =:= "ssl_reuse_sessions", T =:= undefined;
                    N =:= "http_use_server_as_proxy", T =:= "ts_http" ->
            [not_applied(N)];
        {Name, Type} ->
            %% A kind's own options (ts_amqp's credentials) are read by its `from_tsung/3'.
            case lists:member(Name, kind_options(Type)) of
                true -> [];
                false -> [lists:flatten(io_lib:format("<option name=\"~ts\">", [Name]))]
            end
    end;
ign(#xmlElement{name = information}) -> [];
ign(#xmlElement{name = monitor} = E) ->
    ["<monitor batch>" || attr(E, batch) =/= undefined]
        ++ [lists:flatten(io_lib:format("<monitor type=\"~ts\"> (not sampled)", [T]))
            || T <- [attr(E, type, "erlang")], not lists:member(T, ["erlang", "munin", "snmp"])]
        ++ lists:append([ign(X) || X <- elements(E, E#xmlElement.content)]);
%% Inside a monitor: MySQL's counters and custom SNMP OIDs are Tsung's samples of the target,
%% not of the load; not sampled here, and said so.
ign(#xmlElement{name = mysqladmin}) ->
    ["not applied: <mysqladmin> (MySQL's counters are not sampled; the host's are)"];
ign(#xmlElement{name = oid}) ->
    ["not applied: <snmp><oid> (custom SNMP OIDs are not sampled; beamscale's own set is, "
     "docs/samples.md)"];
%% A session of a kind whose replies are not checked: its `<match>'es test nothing; of a kind
%% that takes no variables from replies, its `<dyn_variable>'s set nothing.
ign(#xmlElement{name = session, content = C} = E) ->
    Own = case beamscale_load_kinds:by_tsung_type(attr(E, type, "")) of
              {ok, Mod} ->
                  [unchecked(Elem, attr(E, type), Mod:name(), Why)
                   || {Feature, Elem, Why} <- [{match, match, "are not checked: no match or "
                                                               "nomatch counted"},
                                               {extract, dyn_variable, "set no variable"}],
                      not beamscale_load_kinds:allows(Mod, Feature), has(E, Elem)];
              error -> []
          end,
    own(E) ++ Own ++ lists:append([ign(X) || X <- elements(E, C)]);
%% Tsung 1.7's reader takes no `id' on `<jabber>' (jabber_register.xml's id="new"); `version'
%% is checked by the reader (1.0, or websocket on a WebSocket server) and changes nothing.
ign(#xmlElement{name = jabber} = E) ->
    ["<jabber id> (Tsung 1.7 reads none)" || attr(E, id) =/= undefined]
        ++ ["<jabber version> (streams open as RFC 7395's on a WebSocket server, XMPP 1.0's "
            "elsewhere)" || attr(E, version) =/= undefined]
        ++ lists:append([ign(X) || X <- elements(E, E#xmlElement.content)]);
%% Tsung 1.7's waitForConfirms is a think time of `timeout' seconds (1 by default): confirms
%% are not awaited; beamscale awaits them (a channel's nacks are errors), then goes on.
ign(#xmlElement{name = amqp} = E) ->
    ["not applied: <amqp type=\"waitForConfirms\" timeout> (Tsung waits that long, 1 s by "
     "default, whatever comes; beamscale waits until the channel's publishes are confirmed)"
     || attr(E, type) =:= "waitForConfirms"];
ign(#xmlElement{content = C} = E) ->
    own(E) ++ lists:append([ign(X) || X <- elements(E, C)]);
ign(#xmlPI{name = beamscale}) -> [];
ign(#xmlPI{name = Name}) -> [lists:flatten(io_lib:format("<?~ts?>", [Name]))];
ign(_) -> [].

unchecked(Elem, Type, Kind, Why) ->
    lists:flatten(io_lib:format("not applied: <~ts> in a session of type ~ts (~ts replies ~ts)",
                                [Elem, Type, Kind, Why])).

%% Options that change the load but are not applied: said as such (`warning_line/2' of
%% `beamscale_load_tsung' prints them apart from the settings that change nothing).
not_applied(N) ->
    lists:flatten(io_lib:format("not applied: <option name=\"~ts\"> (~ts)", [N, why(N)])).

why("rate_limit") -> "Tsung caps each user's receiving rate; beamscale reads at full speed";
why("ssl_reuse_sessions") -> "each beamscale user resumes its TLS session all the same";
why("http_use_server_as_proxy") ->
    "beamscale sends paths to the server, not absolute URLs to a proxy".

kind_options(undefined) -> [];
kind_options(Type) ->
    case beamscale_load_kinds:by_tsung_type(Type) of
        {ok, Mod} -> maps:get(options, beamscale_load_kinds:tsung(Mod), []);
        error -> []
    end.

%% The ignored attributes of `E' itself.
own(#xmlElement{name = Name, attributes = As}) ->
    {_, Ignored} = spec(Name),
    ["<" ++ atom_to_list(Name) ++ " " ++ atom_to_list(A) ++ ">"
     || #xmlAttribute{name = A} <- As, lists:member(A, Ignored)].

%% Whether an element named `Name' is inside `E', at any depth.
has(#xmlElement{content = C}, Name) ->
    lists:any(fun(#xmlElement{name = N} = X) -> N =:= Name orelse has(X, Name);
                 (_) -> false
              end, C).

elements(#xmlElement{}, C) ->
    [X || X <- C, is_record(X, xmlElement) orelse is_record(X, xmlPI)].

%% @doc What the reader does with an attribute of an element: `read' (the element's reader
%% takes it, and its value reaches the scenario), `warned' (an ignored setting, listed among the
%% warnings) or `refused' (at its line, naming it and, for those of `refusal/2', why): the table
%% the DTD walk tests hold against Tsung's DTD.
-spec status(atom(), atom()) -> read | warned | refused.
status(Element, Attribute) ->
    {Known, Ignored} = spec(Element),
    case {lists:member(Attribute, Known), lists:member(Attribute, Ignored)} of
        {true, _} -> read;
        {_, true} -> warned;
        _ -> refused
    end.

%% Why an attribute of Tsung's DTD that an element does not read is refused, or `none'.
refusal(set_option, type) ->
    "Tsung 1.7 reads none (its reader does not end on one); give <option type> for the whole file";
refusal(match, subst) -> "a match's text is taken as written";
refusal(match, loop_back) -> "a loop goes back to its own request";
refusal(match, apply_to_content) -> "no function of the file's is applied to a reply";
refusal(dyn_variable, pgsql_expr) -> "re, regexp, header, jsonpath and xpath are";
refusal(ldap, A) when A =:= certfile; A =:= keyfile -> "client certificates are not offered";
refusal(ldap, result_var) -> "search entries are counted, not kept";
refusal(_, _) -> none.

%% Attributes each element may have, and those listed as ignored.
spec(tsung) -> {[dumptraffic], [loglevel, version, backend]};
spec(clients) -> {[], []};
spec(client) -> {[host, cpu, weight, type, batch, scan_intf], [use_controller_vm, maxusers]};
spec(ip) -> {[value, scan], []};
spec(iprange) -> {[value, version], []};
spec(abort) -> {[type], []};
spec(servers) -> {[], []};
spec(server) -> {[host, port, type], [weight]};
spec(monitoring) -> {[], []};
spec(monitor) -> {[host, type], [batch]};
spec(snmp) -> {[port, community], [version]};
spec(munin) -> {[port], []};
spec(load) -> {[duration, unit, loop], []};
spec(arrivalphase) -> {[phase, duration, unit, wait_all_sessions_end], []};
spec(soap) -> {[action], []};
spec(session_setup) -> {[name, probability], []};
spec(user) -> {[session, start_time, unit], []};
spec(users) -> {[arrivalrate, interarrival, unit, maxnumber], []};
spec(options) -> {[], []};
spec(option) -> {[name, type, value, random, min, max, override, id], []};
spec(user_agent) -> {[probability], []};
spec(sessions) -> {[], []};
spec(session) -> {[name, probability, weight, type, bidi], [persistent]};
spec(transaction) -> {[name], []};
%% Tsung 1.7 reads `max' for rate_limit alone (refused), `id' and `min' nowhere.
spec(set_option) -> {[name, value], [id, min, max]};
spec(certificate) -> {[certfile, keyfile, keypass, cacertfile], []};
spec(interaction) -> {[action, id], []};
spec(change_type) -> {[new_type, host, port, server_type, store, restore, bidi], []};
spec('for') -> {[from, to, incr, var], []};
%% A repeat's name is Tsung's key for its loop's counter: each repeat here counts its own.
spec(repeat) -> {[max_repeat], [name]};
spec(while) -> {[var, eq, neq, gt, gte, lt, lte], []};
spec(until) -> {[var, eq, neq, gt, gte, lt, lte], []};
spec('if') -> {[var, eq, neq, gt, gte, lt, lte], []};
spec(setdynvars) -> {[sourcetype, callback, fileid, order, delimiter, length, start, 'end',
                      value, code, from, jsonpath], []};
spec(foreach) -> {[name, in, include, exclude], []};
spec(var) -> {[name], []};
spec(dyn_variable) -> {[name, re, regexp, header, xpath, jsonpath, decode], []};
spec(match) -> {[do, 'when', name, max_loop, sleep_loop, skip_headers, max_restart], []};
spec(add_cookie) -> {[key, value], [domain, path]};
spec(www_authenticate) -> {[userid, passwd, type, nonce, opaque, cnonce, nc, realm, qop], []};
spec(oauth) -> {[consumer_key, consumer_secret, method, access_token, access_token_secret], []};
spec(thinktime) -> {[value, random, min, max], []};
spec(request) -> {[subst], [tag]};
spec(http_header) -> {[name, value, encoding], []};
%% A request kind's element: the attributes its `tsung/0' lists, read or ignored.
spec(Name) ->
    case beamscale_load_kinds:by_element(Name) of
        {ok, Mod} ->
            T = beamscale_load_kinds:tsung(Mod),
            Ignored = maps:get(ignored, T, []),
            {maps:get(attributes, T) -- Ignored, Ignored};
        error -> {[], []}
    end.

%% @doc The element children of `E', which must be among `Allowed' (or ignored ones); blank
%% text, comments and processing instructions (checked elsewhere) are skipped.
-spec children(#xmlElement{}, [atom()], ctx()) -> [#xmlElement{}].
children(#xmlElement{content = C} = E, Allowed, Ctx) ->
    lists:filtermap(
      fun(#xmlElement{name = N} = X) ->
              case lists:member(N, Allowed) of
                  true -> {true, X};
                  false -> unsupported(X, E, Ctx)
              end;
         (#xmlText{value = V}) ->
              [fail(E, Ctx, "unexpected text in <~ts>", [E#xmlElement.name])
               || string:trim(V) =/= ""],
              false;
         (_) -> false
      end, C).

-spec unsupported(#xmlElement{}, #xmlElement{}, ctx()) -> no_return().
unsupported(#xmlElement{name = N} = X, Parent, Ctx) ->
    Kinds = beamscale_load_kinds:tsung_elements(),
    Unread = lists:member(N, ?TSUNG_REQUESTS) andalso not lists:member(N, Kinds),
    Why = if N =:= oauth; N =:= soap -> "not yet";
             Unread -> ["beamscale sends ", lists:join(", ", [atom_to_list(K) || K <- Kinds]),
                        " requests"];
             true -> io_lib:format("not expected in <~ts>", [Parent#xmlElement.name])
          end,
    fail(X, Ctx, "<~ts> is not supported: ~ts", [N, Why]).

%% @doc Every attribute of `E' is supported or an ignored setting.
-spec check_attrs(#xmlElement{}, ctx()) -> ok.
check_attrs(#xmlElement{name = N, attributes = As} = E, Ctx) ->
    {Known, Ignored} = spec(N),
    [fail(E, Ctx, "attribute ~ts of <~ts> is not supported~ts",
          [A, N, case refusal(N, A) of none -> ""; Why -> ": " ++ Why end])
     || #xmlAttribute{name = A} <- As, not lists:member(A, Known ++ Ignored)],
    ok.

%% @doc The `type' of a kind's element (`<ldap>', `<pgsql>'), one of `Types', its attributes
%% checked: the opening every such element's reader has.
-spec type(#xmlElement{}, ctx(), [string(), ...]) -> string().
type(E, Ctx, Types) ->
    check_attrs(E, Ctx),
    T = req(E, type, Ctx),
    _ = lists:member(T, Types) orelse
        fail(E, Ctx, "type=\"~ts\" (expected ~ts or ~ts)",
             [T, lists:join(", ", lists:droplast(Types)), lists:last(Types)]),
    T.

%% @doc An attribute's value, or `undefined'.
-spec attr(#xmlElement{}, atom()) -> string() | undefined.
attr(E, Name) -> attr(E, Name, undefined).

%% @doc An attribute's value, or `Default'.
-spec attr(#xmlElement{}, atom(), Default) -> string() | Default.
attr(#xmlElement{attributes = As}, Name, Default) ->
    case lists:keyfind(Name, #xmlAttribute.name, As) of
        #xmlAttribute{value = V} -> V;
        false -> Default
    end.

%% @doc A required attribute's value.
-spec req(#xmlElement{}, atom(), ctx()) -> string().
req(E, Name, Ctx) ->
    case attr(E, Name) of
        undefined -> fail(E, Ctx, "<~ts> needs the attribute ~ts", [E#xmlElement.name, Name]);
        V -> V
    end.

%% @doc A required attribute's value as a number.
-spec number(#xmlElement{}, atom(), ctx()) -> number().
number(E, Name, Ctx) ->
    %% Tsung reads a number with erl_scan, which skips the white space around it (`"2  "').
    V = string:trim(req(E, Name, Ctx), both, " \t\r\n"),
    case {string:to_integer(V), string:to_float(V)} of
        {{I, ""}, _} -> I;
        {_, {F, ""}} -> F;
        _ -> fail(E, Ctx, "~ts=\"~ts\" is not a number", [Name, V])
    end.

%% @doc A required attribute's value as an integer.
-spec integer(#xmlElement{}, atom(), ctx()) -> integer().
integer(E, Name, Ctx) ->
    case number(E, Name, Ctx) of
        I when is_integer(I) -> I;
        _ -> fail(E, Ctx, "~ts=\"~ts\" is not an integer", [Name, attr(E, Name)])
    end.

%% @doc A required attribute's value as an integer above 0.
-spec positive_integer(#xmlElement{}, atom(), ctx()) -> pos_integer().
positive_integer(E, Name, Ctx) ->
    checked(integer(E, Name, Ctx), fun(X) -> X > 0 end, E, Name, Ctx, "must be above 0").

%% @doc A required attribute's value as a number above 0.
-spec positive(#xmlElement{}, atom(), ctx()) -> number().
positive(E, Name, Ctx) ->
    checked(number(E, Name, Ctx), fun(X) -> X > 0 end, E, Name, Ctx, "must be above 0").

%% @doc A required attribute's value as a number, 0 or more.
-spec non_negative(#xmlElement{}, atom(), ctx()) -> number().
non_negative(E, Name, Ctx) ->
    checked(number(E, Name, Ctx), fun(X) -> X >= 0 end, E, Name, Ctx, "must not be negative").

%% `X' when `Ok(X)', else the error "NAME WHAT".
checked(X, Ok, E, Name, Ctx, What) ->
    case Ok(X) of
        true -> X;
        false -> fail(E, Ctx, "~ts " ++ What, [Name])
    end.

%% @doc An attribute "true" or "false", or `Default'.
-spec bool(#xmlElement{}, atom(), boolean(), ctx()) -> boolean().
bool(E, Name, Default, Ctx) ->
    case attr(E, Name) of
        undefined -> Default;
        "true" -> true;
        "false" -> false;
        V -> fail(E, Ctx, "~ts=\"~ts\" (expected true or false)", [Name, V])
    end.

%% @doc The line of an element.
-spec line(#xmlElement{}, ctx()) -> pos_integer().
line(#xmlElement{name = N, pos = P, parents = Ps}, #{lines := Lines}) ->
    maps:get([{N, P} | Ps], Lines, 1).

%% @doc Throw the error `Fmt' at the line of `E'.
-spec fail(#xmlElement{}, ctx(), string(), list()) -> no_return().
fail(E, Ctx, Fmt, Args) -> throw({tsung, line(E, Ctx), io_lib:format(Fmt, Args)}).
