%% @doc One dynamic request of a user (docs/scenario.md, "Dynamic scenarios"): its spec filled
%% with the user's variables, cookies and credentials before it is sent, then the variables
%% taken from its response, its cookies kept and its checks run.
-module(beamscale_load_dynreq).

-export([prepare/5, after_response/3, set_cookies/2]).
-export_type([dyn/0, jar/0]).

%% Built by `beamscale_load_scenario_dyn': the raw spec as a template (`static' when the checked
%% spec is sent as it is), an http request's head built with its placeholders (or `none'), what
%% to take from the response, the checks, whether cookies are kept, the cookies and the
%% credentials the request adds.
-type dyn() :: #{template := beamscale_load_vars:template(), raw := map(),
                 head := none | {binary(), beamscale_load_vars:template(), binary()},
                 extract := [beamscale_load_extract:extract()],
                 match := [beamscale_load_match:match()], cookies := boolean(),
                 add_cookies := [{binary(), binary()}],
                 auth := none | {basic, beamscale_load_vars:template(),
                                 beamscale_load_vars:template()}
                       | {digest | oauth, #{atom() => beamscale_load_vars:template()}}}.
-type jar() :: #{binary() => binary()}.

%% @doc The spec to send (checked by the kind `Mod' against `Target' when it was filled), the
%% cookie jar with the request's own cookies, and the variables that were unset.
-spec prepare(dyn(), module(), map(), map(), {beamscale_load_vars:vars(), jar()}) ->
    {ok, map(), jar(), [binary()]} | {error, term(), jar(), [binary()]}.
prepare(#{template := {dynamic, _}, head := {_, {dynamic, _} = Template, Body}, auth := none,
          add_cookies := [], cookies := false}, _Mod, Spec, _Target, {Vars, Jar}) ->
    %% The common case (placeholders in the path or headers, no cookie, no credentials) without
    %% the general case's steps: the head filled and the request sent.
    case beamscale_load_vars:fill_head(Template, Vars) of
        {crlf, Name} -> {error, crlf(Name), Jar, []};
        {Filled, Unset} -> {ok, Spec#{bytes := [Filled, "\r\n", Body]}, Jar, Unset}
    end;
prepare(#{add_cookies := Add} = Dyn, Mod, Spec, Target, {Vars, Jar0}) ->
    Jar = case Add of
              [] -> Jar0;
              _ -> maps:merge(Jar0, maps:from_list(Add))
          end,
    Cookie = cookie_header(Dyn, Jar),
    case {maps:get(template, Dyn), Cookie, maps:get(auth, Dyn)} of
        {static, [], none} -> {ok, Spec, Jar, []};
        {_, _, Auth} when Auth =:= none; element(1, Auth) =:= basic ->
            fill(Dyn, Mod, Spec, {Target, Vars, Jar, Cookie});
        _ -> build(Dyn, Mod, Target, {Vars, Jar, Cookie})
    end.

%% The head built at validation filled, the request's own headers put before the blank line.
fill(#{head := {Head, Template, _}} = Dyn, _Mod, Spec, {_, Vars, Jar, _} = Ctx) ->
    case Template of
        static -> fill_head(Dyn, Spec, Ctx, {Head, []});
        _ -> case beamscale_load_vars:fill_head(Template, Vars) of
                 {crlf, Name} -> {error, crlf(Name), Jar, []};
                 Filled -> fill_head(Dyn, Spec, Ctx, Filled)
             end
    end;
fill(Dyn, Mod, _Spec, {Target, Vars, Jar, Cookie}) -> build(Dyn, Mod, Target, {Vars, Jar, Cookie}).

%% A variable's value with CR or LF is not sent (the request it would split is counted).
crlf(Name) ->
    {bad_request, head, lists:flatten(io_lib:format("variable ~ts holds CR or LF: it would split "
                                                    "the request", [Name]))}.

fill_head(#{head := {_, _, Body}} = Dyn, Spec, {_, Vars, Jar, Cookie}, {Filled, Unset}) ->
    Bytes = case Cookie ++ auth_header(Dyn, Vars, none) of
                [] -> [Filled, "\r\n", Body];
                Hs -> [Filled, [[N, ": ", V, "\r\n"] || {N, V} <- Hs], "\r\n", Body]
            end,
    {ok, Spec#{bytes := Bytes}, Jar, Unset}.

%% The spec filled and checked again by its kind.
build(#{template := Template} = Dyn, Mod, Target, {Vars, Jar, Cookie}) ->
    {Raw, Unset} = case Template of
                       static -> {maps:get(raw, Dyn), []};
                       _ -> beamscale_load_vars:render(Template, Vars)
                   end,
    Headers = Cookie ++ auth_header(Dyn, Vars, {Raw, Target}),
    Raw1 = case Headers of
               [] -> Raw;
               _ -> Raw#{headers => maps:get(headers, Raw, []) ++ Headers}
           end,
    case Mod:check(Raw1, Target) of
        {ok, Checked} -> {ok, Checked, Jar, Unset};
        {error, Key, Msg} -> {error, {bad_request, Key, lists:flatten(Msg)}, Jar, Unset}
    end.

cookie_header(#{cookies := true}, Jar) when map_size(Jar) > 0 ->
    [{"Cookie", binary_to_list(iolist_to_binary(
                  lists:join("; ", [[K, "=", V] || {K, V} <- lists:sort(maps:to_list(Jar))])))}];
cookie_header(_, _) -> [].

auth_header(#{auth := {basic, U, P}}, Vars, _) ->
    Cred = base64:encode(<<(text(U, Vars))/binary, ":", (text(P, Vars))/binary>>),
    [{"Authorization", "Basic " ++ binary_to_list(Cred)}];
auth_header(#{auth := {digest, A}}, Vars, {Raw, _}) ->
    {Method, Path} = method_path(Raw),
    [{"Authorization", beamscale_load_httpauth:digest(texts(A, Vars), Method, Path)}];
auth_header(#{auth := {oauth, O}}, Vars, {Raw, Target}) ->
    {Method, Path} = method_path(Raw),
    {P, Q} = case binary:split(Path, <<"?">>) of
                 [P0, Q0] -> {P0, beamscale_load_httpauth:params(Q0)};
                 [P0] -> {P0, []}
             end,
    [{"Authorization", beamscale_load_httpauth:oauth(texts(O, Vars), Method,
                                                     {base_uri(Target, P), Q})}];
auth_header(_, _, _) -> [].

texts(Templates, Vars) -> maps:map(fun(_, T) -> text(T, Vars) end, Templates).

method_path(Raw) ->
    {case maps:get(method, Raw, get) of
         M when is_atom(M) -> string:uppercase(atom_to_binary(M));
         M -> unicode:characters_to_binary(M)
     end,
     unicode:characters_to_binary(maps:get(path, Raw, "/"))}.

%% RFC 5849 3.4.1.2: the scheme and host in lower case, the port only when not the default.
base_uri(#{host := Host, port := Port} = Target, Path) ->
    {Scheme, Default} = case maps:is_key(tls, Target) of
                            true -> {"https", 443};
                            false -> {"http", 80}
                        end,
    PortText = case Port of
                   Default -> "";
                   _ -> [":", integer_to_list(Port)]
               end,
    iolist_to_binary([Scheme, "://", string:lowercase(Host), PortText, Path]).

text(static, _) -> <<>>;
text({dynamic, _} = T, Vars) -> element(1, beamscale_load_vars:render(T, Vars)).

%% @doc After a response: the variables and cookies, the counter keys that fired and what the
%% session does next.
-spec after_response(dyn(), beamscale_load_extract:response(),
                     {beamscale_load_vars:vars(), jar()}) ->
    {beamscale_load_vars:vars(), jar(), [binary()], beamscale_load_match:action()}.
after_response(#{extract := Ex, match := [], cookies := false}, Resp, {Vars, Jar}) ->
    {beamscale_load_extract:apply(Ex, Resp, Vars), Jar, [], continue};
after_response(#{extract := Ex, match := Ms, cookies := C}, Resp, {Vars, Jar}) ->
    Vars1 = beamscale_load_extract:apply(Ex, Resp, Vars),
    Jar1 = case C of
               true -> set_cookies(Resp, Jar);
               false -> Jar
           end,
    {Keys, Action} = beamscale_load_match:check(Ms, Resp),
    {Vars1, Jar1, Keys, Action}.

%% @doc The jar after the response's `Set-Cookie' headers: `name=value' kept, a cookie with
%% `Max-Age=0' or an empty value removed. Domain and path are not looked at: a user's cookies
%% go to every request of its session.
-spec set_cookies(beamscale_load_extract:response(), jar()) -> jar().
set_cookies(#{headers := Hs}, Jar) ->
    lists:foldl(fun({N, V}, J) ->
                        case string:lowercase(N) of
                            <<"set-cookie">> -> cookie(V, J);
                            _ -> J
                        end
                end, Jar, Hs);
set_cookies(_NoHeaders, Jar) -> Jar.

cookie(Header, Jar) ->
    [Pair | Attrs] = [string:trim(A) || A <- binary:split(Header, <<";">>, [global])],
    case binary:split(Pair, <<"=">>) of
        [Name, Value] when Name =/= <<>> ->
            Gone = Value =:= <<>> orelse
                lists:any(fun(A) -> string:lowercase(A) =:= <<"max-age=0">> end, Attrs),
            case Gone of
                true -> maps:remove(Name, Jar);
                false -> Jar#{Name => Value}
            end;
        _ -> Jar
    end.
