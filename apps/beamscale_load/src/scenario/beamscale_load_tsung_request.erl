%% @doc The `<request>' element of a Tsung session, translated (pure) into a step of the
%% session type's request kind and the targets it uses: the kind's own `from_tsung/3' reads its
%% element (`beamscale_load_request'), with the helpers exported here (`<server>', literal text,
%% values, atoms). Part of `beamscale_load_tsung_xml'; errors are thrown as it throws them.
-module(beamscale_load_tsung_request).

-export([request/2, node_name/1, static/3, literal/2, values/1, text/1, choice/4, atom/4,
         server/2, previous_url/2, tls/0, file_contents/3]).

-include_lib("xmerl/include/xmerl.hrl").

%% Erlang's longest atom, in characters.
-define(MAX_ATOM, 255).
%% Tsung does not check a server's certificate.
-define(TSUNG_TLS, #{verify => verify_none}).
%% A body read from a file (`contents_from_file'): as large as a raw request's data.
-define(MAX_FILE_BYTES, 16 * 1024 * 1024).

-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/3, bool/4, fail/4]).

%% @doc The last element of `E''s name with an absolute url (without `%%') before `E' in its
%% session, in the file's order, and that url: Tsung's reader sends a relative url that follows
%% one to its server (`none': to the `<server>').
-spec previous_url(#xmlElement{}, map()) -> {#xmlElement{}, string()} | none.
previous_url(#xmlElement{name = Name} = E, #{session := S}) ->
    At = order(E),
    case [{H, U} || H <- named(S, Name), order(H) < At, U <- [attr(H, url, "")], absolute(U)] of
        [] -> none;
        Before -> lists:last(Before)
    end;
previous_url(_E, _Ctx) -> none.

absolute(U) ->
    (lists:prefix("http://", U) orelse lists:prefix("https://", U))
        andalso string:find(U, "%%") =:= nomatch.

%% The elements named `Name' inside `E' at any depth, in the file's order.
named(#xmlElement{content = C}, Name) ->
    lists:append([[K || K#xmlElement.name =:= Name] ++ named(K, Name) || #xmlElement{} = K <- C]).

%% An element's place in the file: its position among its siblings and its parents', from the
%% root (lists compare in the file's order).
order(#xmlElement{pos = P, parents = Ps}) -> lists:reverse([P | [Q || {_, Q} <- Ps]]).

%% @doc The step of a `<request>' and the `{Name, Target}' pairs it uses. `Ctx' holds the
%% session's kind module (`type'), the `<server>'s and the targets of processing instructions.
-spec request(#xmlElement{}, map()) -> {{atom(), map()}, [{atom(), map()}]}.
request(E, #{type := Mod} = Ctx) ->
    check_attrs(E, Ctx),
    Subst = case attr(E, subst, "false") of
                "all_except_body" -> fail(E, Ctx, "subst=\"all_except_body\" is not supported",
                                          []);
                _ -> bool(E, subst, false, Ctx)
            end,
    #{element := El, type := Type} = beamscale_load_kinds:tsung(Mod),
    Kids = children(E, beamscale_load_kinds:tsung_elements() ++ [dyn_variable, match], Ctx),
    case [K || #xmlElement{name = N} = K <- Kids, N =/= dyn_variable, N =/= match] of
        [#xmlElement{name = El} = R] ->
            [literal(R, Ctx) || not Subst],
            [fail(E, Ctx, "subst=\"true\" with %%...%% is supported on ~ts requests only",
                  [kinds_with(subst)])
             || Subst, not beamscale_load_kinds:allows(Mod, subst),
                string:find(values(R), "%%") =/= nomatch],
            [static(E, R, Ctx) || not beamscale_load_kinds:allows(Mod, subst)],
            {Spec, Used} = Mod:from_tsung(E, R, Ctx),
            {step(Mod, Spec, maps:get(timeouts, Ctx)), Used};
        [#xmlElement{name = Other} = R] ->
            fail(R, Ctx, "<~ts> in a session of type ~ts", [Other, Type]);
        _ -> fail(E, Ctx, "<request> needs one <~ts> element", [El])
    end.

%% A kind's element that waits for what the server pushes (ts_mqtt's waitForMessages) comes
%% back as `#{wait_ms => Ms, target => T}': a `wait' step on the kind's connection.
step(Mod, #{wait_ms := Ms, target := T}, _) ->
    {wait, #{kind => Mod:name(), target => T, timeout_ms => Ms}};
%% Tsung's `ack="global"': the request, then the rendezvous `global' of that many users, each
%% waiting `global_ack_timeout'.
step(Mod, #{rendezvous := N} = Spec, #{global_ack_ms := Ms} = T) ->
    {steps, [step(Mod, maps:remove(rendezvous, Spec), T),
             {rendezvous, "global", #{users => N, timeout_ms => Ms}}]};
%% A kind's element may name the kind that sends it (`<http beamscale_version="2">': http2).
%% A reply is awaited `idle_timeout' (Tsung's 10 minutes), not a terms file's 5 s.
step(_Mod, #{kind := Name} = Spec, #{idle_ms := Ms}) ->
    {Name, maps:merge(#{timeout_ms => Ms}, maps:remove(kind, Spec))};
step(Mod, Spec, #{idle_ms := Ms}) -> {Mod:name(), maps:merge(#{timeout_ms => Ms}, Spec)}.

kinds_with(Feature) ->
    lists:join(" and ", [atom_to_list(M:name()) || M <- beamscale_load_kinds:all(),
                                                   beamscale_load_kinds:allows(M, Feature)]).

%% @doc Without subst="true" Tsung sends `%%_name%%' as it is; beamscale would fill it, so it
%% refuses (`literal/2'). A kind without `extract' and `match' refuses `<dyn_variable>' and
%% `<match>'; `subst' with nothing to substitute changes nothing and is accepted.
-spec static(#xmlElement{}, #xmlElement{}, map()) -> ok.
static(E, _R, Ctx) ->
    [fail(E, Ctx, "<dyn_variable> and <match> are supported on ~ts requests", [kinds_with(match)])
     || beamscale_load_tsung_dyn:request_keys(E, none, Ctx) =/= #{}],
    ok.

%% @doc Refuse `%%_' in an element's attributes and text when its request has no subst.
-spec literal(#xmlElement{}, map()) -> ok.
literal(#xmlElement{attributes = As} = E, Ctx) ->
    [fail(E, Ctx, "~ts holds %%_ but the request has no subst=\"true\"", [N])
     || #xmlAttribute{name = N, value = V} <- As, string:find(V, "%%_") =/= nomatch],
    [fail(E, Ctx, "<~ts>'s text holds %%_ but the request has no subst=\"true\"",
          [E#xmlElement.name])
     || string:find(text(E), "%%_") =/= nomatch],
    ok.

%% @doc Module, function, node and address names must be atoms to be called or reached: each
%% is checked to fit one, and a file (1 MB at most) can only hold so many.
-spec atom(#xmlElement{}, atom(), string(), map()) -> atom().
atom(_E, _Name, Text, _Ctx) when length(Text) =< ?MAX_ATOM -> list_to_atom(Text);
atom(E, Name, _Text, Ctx) ->
    fail(E, Ctx, "~ts is longer than ~b characters (Erlang's longest name)", [Name, ?MAX_ATOM]).

%% @doc Every attribute value and text inside an element, one string.
-spec values(#xmlElement{}) -> string().
values(#xmlElement{attributes = As, content = C}) ->
    lists:append([V || #xmlAttribute{value = V} <- As, is_list(V)]
                 ++ [case X of
                         #xmlText{value = V} -> V;
                         #xmlElement{} -> values(X);
                         _ -> ""
                     end || X <- C]).

%% @doc The text inside an element (CDATA included).
-spec text(#xmlElement{}) -> string().
text(#xmlElement{content = C}) -> lists:append([V || #xmlText{value = V} <- C]).

%% @doc An attribute among `Known' texts (the first the default), as an existing atom.
-spec choice(#xmlElement{}, atom(), [string(), ...], map()) -> atom().
choice(E, Name, [Default | _] = Known, Ctx) ->
    V = attr(E, Name, Default),
    case lists:member(V, Known) of
        true -> list_to_existing_atom(V);
        false -> fail(E, Ctx, "~ts=\"~ts\" (expected ~ts)", [Name, V, lists:join(" or ", Known)])
    end.

%% @doc The bytes of the file the attribute `Name' of `E' names (Tsung's `contents_from_file'),
%% read when the scenario is: a path relative to the XML file's directory that stays inside it
%% (no absolute path, no `..' or link out of it), at most 16 MiB.
-spec file_contents(#xmlElement{}, atom(), map()) -> binary().
file_contents(E, Name, #{file := File} = Ctx) ->
    Path = attr(E, Name, ""),
    Dir = filename:dirname(filename:absname(File)),
    case filelib:safe_relative_path(Path, Dir) of
        unsafe -> fail(E, Ctx, "~ts=\"~ts\": a path inside the XML file's directory (~ts) is "
                               "expected", [Name, Path, Dir]);
        Rel ->
            case beamscale_format_file:read(filename:join(Dir, Rel), ?MAX_FILE_BYTES) of
                {ok, Bin} -> Bin;
                {error, Why} -> fail(E, Ctx, "~ts=\"~ts\": ~ts",
                                     [Name, Path, beamscale_format_file:format_error(Why)])
            end
    end.

%% @doc Tsung's TLS options: the certificate is not checked.
-spec tls() -> map().
tls() -> ?TSUNG_TLS.

%% @doc The name part of `name@host' (all of it when there is no host).
-spec node_name(string()) -> string().
node_name(Text) -> hd(string:split(Text, "@")).

%% @doc The `<server>' behind an element (a relative URL, a raw, websocket... request): one,
%% of a type its kind's `tsung/0' lists: tcp, ssl (TLS, the certificate not checked, as Tsung
%% does) or udp, or their IPv6 forms tcp6, ssl6 and udp6.
-spec server(#xmlElement{}, map()) -> {atom(), map()}.
server(#xmlElement{name = El} = Http, #{servers := Servers} = Ctx) ->
    {ok, Mod} = beamscale_load_kinds:by_element(El),
    #{servers := Known} = beamscale_load_kinds:tsung(Mod),
    case Servers of
        [{S, Host, Port, Type6}] ->
            Address = Host ++ ":" ++ integer_to_list(Port),
            %% tcp6, ssl6 and udp6 are Tsung's over IPv6: the same here, the host's address
            %% (`::1') saying which.
            Type = case lists:member(Type6, ["tcp6", "ssl6", "udp6"]) of
                       true -> lists:droplast(Type6);
                       false -> Type6
                   end,
            [fail(S, Ctx, "server type \"~ts\" is not supported for <~ts> (~ts)",
                  [Type, El, lists:join(", ", Known)]) || not lists:member(Type, Known)],
            %% After a `<change_type>', its server under a name of its own.
            {maps:get(server_name, Ctx, server), case Type of
                                                     "tcp" -> #{address => Address};
                                                     "bosh" -> #{address => Address};
                                                     "websocket" -> #{address => Address};
                                                     "bosh_ssl" -> #{address => Address,
                                                                     tls => ?TSUNG_TLS};
                                                     "websocket_ssl" -> #{address => Address,
                                                                          tls => ?TSUNG_TLS};
                                                     "ssl" -> #{address => Address,
                                                                tls => ?TSUNG_TLS};
                                                     "udp" -> #{address => Address,
                                                                transport => udp}
                                                 end};
        [] -> fail(Http, Ctx, "<~ts> needs a <server> (or an absolute url)", [El]);
        [_, {S, _, _, _} | _] ->
            fail(S, Ctx, "several <server> elements: Tsung spreads sessions over them, beamscale "
                         "sends to one", [])
    end.
