%% @doc Pure HTML helpers for the one-file reports: escaping and a few elements. Every text that
%% reaches a page goes through `escape/1' (directly or via `text/1'), so a benchmark printing
%% `<script>' shows as text.
-module(beamscale_report_html).

-export([escape/1, text/1, page/3, table/2, el/3, el/2, section/2]).
-export_type([text/0]).

%% Text to show: characters, numbers or atoms; escaped on the way out.
-type text() :: unicode:chardata() | number() | atom().

%% Styles for every report page, inlined: a report opens offline as one file.
-define(CSS, <<"body{font-family:sans-serif;margin:1.5em;color:#222}"
               "table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}"
               "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
               "th{background:#eee}td.t{text-align:left}tr.noisy td{background:#fff4d6}"
               "tr.slower td{background:#fde0e0}tr.faster td{background:#e0f4e0}"
               ".charts{display:flex;flex-wrap:wrap;gap:12px}"
               ".bad{color:#b00}.good{color:#070}.warn{color:#a60}"
               "pre{background:#f6f6f6;padding:6px;white-space:pre-wrap}">>).

%% @doc Text with `& < > " '' replaced by entities, as UTF-8.
-spec escape(text()) -> binary().
escape(N) when is_integer(N) -> integer_to_binary(N);
escape(F) when is_float(F) -> beamscale_format_float:decimal(F);
escape(A) when is_atom(A) -> escape(atom_to_binary(A));
escape(Text) ->
    B = case unicode:characters_to_binary(Text) of
            Bin when is_binary(Bin) -> Bin;
            _ -> iolist_to_binary(io_lib:format("~w", [Text]))
        end,
    << <<(entity(C))/binary>> || <<C>> <= B >>.

entity($&) -> <<"&amp;">>;
entity($<) -> <<"&lt;">>;
entity($>) -> <<"&gt;">>;
entity($") -> <<"&quot;">>;
entity($') -> <<"&#39;">>;
entity(C) -> <<C>>.

%% @doc Escaped text, marked as such for `el/3'.
-spec text(text()) -> {safe, binary()}.
text(T) -> {safe, escape(T)}.

%% @doc A whole page: title, inline style, body (already HTML).
-spec page(text(), iodata(), iodata()) -> iodata().
page(Title, ExtraCss, Body) ->
    [<<"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>">>,
     escape(Title), <<"</title><style>">>, ?CSS, ExtraCss, <<"</style></head>\n<body>\n">>,
     Body, <<"\n</body></html>\n">>].

%% @doc An element with attributes (values escaped) and content: iodata given as `{safe, IoData}'
%% is HTML already, a list is a list of children, anything else is text.
-spec el(atom(), [{atom(), text()}], term()) -> iodata().
el(Tag, Attrs, Content) ->
    T = atom_to_binary(Tag),
    [$<, T, [[$\s, atom_to_binary(K), "=\"", escape(V), $"] || {K, V} <- Attrs], $>,
     content(Content), "</", T, ">"].

%% @doc An element without attributes.
-spec el(atom(), term()) -> iodata().
el(Tag, Content) -> el(Tag, [], Content).

content({safe, IoData}) -> IoData;
content(L) when is_list(L) ->
    case io_lib:printable_unicode_list(L) of
        true -> escape(L);
        false -> [content(C) || C <- L]
    end;
content(T) -> escape(T).

%% @doc A table: header texts, and rows as `{Class, Cells}' or plain cell lists. A cell is text
%% (numbers right-aligned, other text left-aligned) or `{safe, IoData}'. Headers all empty (a
%% key/value table) give no header row: an empty first row is what the page showed before.
-spec table([text()], [[term()] | {text(), [term()]}]) -> iodata().
table(Headers, Rows) ->
    Head = case lists:all(fun(H) -> H =:= "" orelse H =:= <<>> end, Headers) of
               true -> [];
               false -> [el(tr, {safe, [el(th, H) || H <- Headers]})]
           end,
    el(table, {safe, [Head | [row(R) || R <- Rows]]}).

row({Class, Cells}) -> el(tr, [{class, Class}], {safe, [cell(C) || C <- Cells]});
row(Cells) -> el(tr, {safe, [cell(C) || C <- Cells]}).

cell(N) when is_number(N) -> el(td, N);
cell({safe, _} = Safe) -> el(td, [{class, "t"}], Safe);
cell(T) -> el(td, [{class, "t"}], T).

%% @doc A heading and its content, as a section.
-spec section(text(), iodata()) -> iodata().
section(Title, Body) -> [el(section, {safe, [el(h2, Title), Body]}), $\n].
