%% @doc Cutting an XMPP stream into its parts, bounded: the stream header, each top-level
%% stanza (whole, as bytes), the stream's end. Nothing is parsed into terms beyond what the
%% `xmpp' kind reads (a stanza's name, a few attributes, an error's condition, a body): no atom
%% is made from server data, an element deeper than ?MAX_DEPTH or a stanza longer than the
%% target's `max_reply_bytes' is an error, and attributes are read from the opening tag only.
-module(beamscale_load_xmpp_stream).

-export([next/2, name/1, attr/2, condition/1, body/1, has/2, format_error/1]).

-define(MAX_DEPTH, 64).
%% A condition or element name in a reason is cut to this many bytes (a bounded reason text).
-define(MAX_NAME, 40).

-type part() :: {header, binary()} | {stanza, binary()} | stream_end.

%% @doc The next part of `Buf': `{ok, Part, Rest}', `more' (an incomplete part) or an error.
-spec next(binary(), pos_integer()) ->
    {ok, part(), binary()} | more | {error, {?MODULE, term()}}.
next(Buf, Max) ->
    case skip_space(Buf) of
        <<>> -> more;
        <<"<?", _/binary>> = B -> after_seq(B, <<"?>">>, Max, fun next/2);
        <<"<stream:stream", _/binary>> = B ->
            case binary:match(B, <<">">>) of
                {At, 1} -> <<Head:At/binary, ">", Rest/binary>> = B,
                           {ok, {header, Head}, Rest};
                nomatch -> bounded(B, Max)
            end;
        <<"</stream:stream>", Rest/binary>> -> {ok, stream_end, Rest};
        <<"<", C, _/binary>> = B when C =/= $/, C =/= $! -> top(B, Max);
        B when byte_size(B) < 16 -> more;
        _ -> {error, {?MODULE, not_xmpp}}
    end.

skip_space(<<C, Rest/binary>>) when C =:= $\s; C =:= $\n; C =:= $\r; C =:= $\t ->
    skip_space(Rest);
skip_space(B) -> B.

after_seq(B, Seq, Max, Then) ->
    case binary:match(B, Seq) of
        {At, L} -> Then(binary:part(B, At + L, byte_size(B) - At - L), Max);
        nomatch -> bounded(B, Max)
    end.

bounded(B, Max) when byte_size(B) > Max -> {error, {?MODULE, {too_big, Max}}};
bounded(_B, _Max) -> more.

%% One top-level element: tags counted from its start until its depth is 0 again.
top(B, Max) ->
    case scan(B, 0, 0) of
        {done, End} when End > Max -> {error, {?MODULE, {too_big, Max}}};
        {done, End} -> <<S:End/binary, Rest/binary>> = B, {ok, {stanza, S}, Rest};
        more -> bounded(B, Max);
        {error, _} = E -> E
    end.

scan(B, Pos, Depth) ->
    case binary:match(B, <<"<">>, [{scope, {Pos, byte_size(B) - Pos}}]) of
        nomatch -> more;
        {At, 1} -> tag(B, At, binary:part(B, At + 1, min(8, byte_size(B) - At - 1)), Depth)
    end.

tag(B, At, <<"![CDATA[", _/binary>>, Depth) -> skip(B, At, <<"]]>">>, Depth);
tag(B, At, <<"!--", _/binary>>, Depth) -> skip(B, At, <<"-->">>, Depth);
tag(_B, _At, <<"!", _/binary>> = T, _Depth) when byte_size(T) < 8 ->
    case lists:any(fun(P) -> binary:longest_common_prefix([T, P]) =:= byte_size(T) end,
                   [<<"![CDATA[">>, <<"!--">>]) of
        true -> more;
        false -> {error, {?MODULE, not_xmpp}}
    end;
tag(_B, _At, <<C, _/binary>>, _Depth) when C =:= $!; C =:= $? ->
    {error, {?MODULE, not_xmpp}};
tag(B, At, <<"/", _/binary>>, Depth) ->
    case {binary:match(B, <<">">>, [{scope, {At, byte_size(B) - At}}]), Depth} of
        {nomatch, _} -> more;
        {{End, 1}, 1} -> {done, End + 1};
        {{End, 1}, _} -> scan(B, End + 1, Depth - 1)
    end;
tag(_B, _At, <<>>, _Depth) -> more;
tag(_B, _At, _, Depth) when Depth >= ?MAX_DEPTH -> {error, {?MODULE, too_deep}};
tag(B, At, _, Depth) ->
    case binary:match(B, <<">">>, [{scope, {At, byte_size(B) - At}}]) of
        nomatch -> more;
        {End, 1} when Depth =:= 0, binary_part(B, End - 1, 1) =:= <<"/">> -> {done, End + 1};
        {End, 1} ->
            case binary:at(B, End - 1) of
                $/ -> scan(B, End + 1, Depth);
                _ -> scan(B, End + 1, Depth + 1)
            end
    end.

skip(B, At, Seq, Depth) ->
    case binary:match(B, Seq, [{scope, {At, byte_size(B) - At}}]) of
        nomatch -> more;
        {End, L} -> scan(B, End + L, Depth)
    end.

%% @doc The element name of a stanza or header (`<<"message">>', `<<"stream:features">>').
-spec name(binary()) -> binary().
name(<<"<", S/binary>>) -> binary:part(S, 0, name_end(S, 0)).

%% A scan of the name's bytes (a match of five patterns compiled them at each stanza).
name_end(<<C, _/binary>>, N) when C =:= $\s; C =:= $>; C =:= $/; C =:= $\n; C =:= $\t -> N;
name_end(<<_, R/binary>>, N) -> name_end(R, N + 1);
name_end(<<>>, N) -> N.

%% @doc An attribute of the opening tag (either quote), or `undefined'.
-spec attr(binary(), binary()) -> binary() | undefined.
attr(S, Name) ->
    Open = case binary:match(S, <<">">>) of
               {At, _} -> binary:part(S, 0, At);
               nomatch -> S
           end,
    value(Open, [<<" ", Name/binary, "='">>, <<" ", Name/binary, "=\"">>]).

value(Open, Keys) ->
    case binary:match(Open, Keys) of
        nomatch -> undefined;
        {At, L} ->
            Q = binary:at(Open, At + L - 1),
            From = At + L,
            case binary:match(Open, <<Q>>, [{scope, {From, byte_size(Open) - From}}]) of
                {End, _} -> binary:part(Open, From, End - From);
                nomatch -> undefined
            end
    end.

%% @doc The condition of an error stanza or a SASL failure: the name of the first element inside
%% `<error>' or `<failure>' (or inside `<stream:error>'), cut to ?MAX_NAME bytes.
-spec condition(binary()) -> binary().
condition(S) ->
    Inner = case binary:match(S, [<<"<error">>, <<"<failure">>, <<"<stream:error">>]) of
                {At, _} -> binary:part(S, At + 1, byte_size(S) - At - 1);
                nomatch -> <<>>
            end,
    case binary:match(Inner, <<"<">>) of
        {I, 1} ->
            N = name(binary:part(Inner, I, byte_size(Inner) - I)),
            binary:part(N, 0, min(?MAX_NAME, byte_size(N)));
        nomatch -> <<"unknown">>
    end.

%% @doc The text of a message's `<body>', or `undefined'.
-spec body(binary()) -> binary() | undefined.
body(S) ->
    case binary:match(S, <<"<body>">>) of
        {At, L} ->
            From = At + L,
            case binary:match(S, <<"</body>">>, [{scope, {From, byte_size(S) - From}}]) of
                {End, _} -> binary:part(S, From, End - From);
                nomatch -> undefined
            end;
        nomatch -> undefined
    end.

%% @doc Whether a stanza holds `Text' (a namespace, a child's name).
-spec has(binary(), binary()) -> boolean().
has(S, Text) -> binary:match(S, Text) =/= nomatch.

%% @doc The text of its reasons.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({too_big, Max}) ->
    io_lib:format("XMPP stanza above max_reply_bytes (~b): connection closed", [Max]);
format_error(too_deep) ->
    io_lib:format("XMPP stanza nested deeper than ~b elements: connection closed", [?MAX_DEPTH]);
format_error(not_xmpp) -> "bad XMPP stream (not a stanza): connection closed".
